/// The header fields of a response sent over HTTP/2 (RFC 9113 §8.2): names in lower case, the
/// connection-specific fields of HTTP/1.1 left out (sending one is a stream error for the receiver, §8.2.2),
/// and `content-length` and `date` added as the HTTP/1.1 serializer adds them.
public enum HTTP2ResponseFields {
    /// Fields that only mean something to one HTTP/1.1 connection.
    static let connectionSpecific: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade",
    ]

    /// The fields after `:status` for `response`.
    public static func fields(for response: HTTPResponse, date: String) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(response.headers.count + 2)
        for field in response.headers {
            let name = field.name.lowercased()
            if connectionSpecific.contains(name) || name == "content-length" || name == "date" { continue }
            fields.append((name, field.value))
        }
        // As over HTTP/1.1: the body's length also for HEAD and 304 (RFC 9110 §8.6, §9.3.2).
        fields.append(("content-length", String(response.body.count)))
        fields.append(("date", date))
        return fields
    }
}
