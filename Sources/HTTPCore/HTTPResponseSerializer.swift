import ASCII

/// Turns a response into the bytes of its status line and header section (RFC 9112 §4–§6).
public enum HTTPResponseSerializer {
    /// The head of `response`. The caller sends `response.body` after it unless `omitBody`.
    ///
    /// Adds `Content-Length` (the body's length, also for HEAD, RFC 9110 §9.3.2, and for a 304, whose body is
    /// the representation it stands for, RFC 9110 §8.6), `Date`, and
    /// `Connection: close` when `keepAlive` is false or `Connection: keep-alive` for an HTTP/1.0 client that asked.
    public static func head(
        _ response: HTTPResponse, version: HTTPVersion = .http1_1, keepAlive: Bool, date: String
    ) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160)
        writeHead(response, version: version, keepAlive: keepAlive, dateLine: dateLine(date), into: &out)
        return out
    }

    /// Appends the head of `response` to `out`, as `head` makes it, with `extraField` after the response's own
    /// fields. `dateLine` is the whole `Date` field line (see `dateLine(_:)`), which a server makes once a second.
    public static func writeHead(
        _ response: HTTPResponse, version: HTTPVersion, keepAlive: Bool, dateLine: [UInt8],
        extraField: (name: String, value: String)? = nil, into out: inout [UInt8]
    ) {
        out.append(contentsOf: response.status.statusLine)
        for field in response.headers {
            appendField(field.name, field.value, to: &out)
        }
        if let extraField { appendField(extraField.name, extraField.value, to: &out) }
        if (100..<200).contains(response.status.code) {
            out.append(contentsOf: crlf)
            return
        }
        if response.stream == nil {
            out.append(contentsOf: contentLengthName)
            ASCII.appendDecimal(response.body.count, to: &out)
            out.append(contentsOf: crlf)
        } else if version != .http1_0 {
            // A body made while it is sent has no length; an HTTP/1.0 client reads it until the connection ends.
            out.append(contentsOf: chunkedEncoding)
        }
        out.append(contentsOf: dateLine)
        if !keepAlive {
            out.append(contentsOf: connectionClose)
        } else if version == .http1_0 {
            out.append(contentsOf: connectionKeepAlive)
        }
        out.append(contentsOf: crlf)
    }

    /// The `Date` field line for `date` (an IMF-fixdate, see `HTTPDate`).
    public static func dateLine(_ date: String) -> [UInt8] {
        Array("Date: \(date)\r\n".utf8)
    }

    /// The interim `100 Continue` response.
    public static let continueHead: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    private static let crlf: [UInt8] = [0x0D, 0x0A]
    private static let contentLengthName = Array("Content-Length: ".utf8)
    private static let chunkedEncoding = Array("Transfer-Encoding: chunked\r\n".utf8)
    private static let connectionClose = Array("Connection: close\r\n".utf8)
    private static let connectionKeepAlive = Array("Connection: keep-alive\r\n".utf8)

    private static func appendField(_ name: String, _ value: String, to out: inout [UInt8]) {
        out.append(contentsOf: name.utf8)
        out.append(UInt8(ascii: ":"))
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: value.utf8)
        out.append(contentsOf: crlf)
    }
}
