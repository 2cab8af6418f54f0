/// The header fields of a response sent over HTTP/2 (RFC 9113 §8.2): names in lower case, the
/// connection-specific fields of HTTP/1.1 left out (sending one is a stream error for the receiver, §8.2.2),
/// and `content-length` and `date` added as the HTTP/1.1 serializer adds them. Names are bytes, made once.
public enum HTTP2ResponseFields {
    public static let status = Array(":status".utf8)
    public static let requestID = Array("x-request-id".utf8)
    public static let contentLength = Array("content-length".utf8)
    public static let date = Array("date".utf8)

    /// Fields a response does not send as the handler set them: those that only mean something to one
    /// HTTP/1.1 connection, and the two the server adds itself.
    static let notSent = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "content-length", "date",
    ]

    /// Whether a handler's field called `name` is sent.
    public static func isSent(_ name: String) -> Bool {
        !notSent.contains { HTTPHeaders.namesMatch($0, name) }
    }

    /// Appends `name` in lower case (field names are ASCII tokens).
    public static func appendLowercased(_ name: String, to out: inout [UInt8]) {
        for byte in name.utf8 {
            out.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte)
        }
    }
}
