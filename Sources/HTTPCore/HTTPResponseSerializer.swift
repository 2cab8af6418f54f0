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
        out.append(contentsOf: "HTTP/1.1 \(response.status.code) \(response.status.reason)\r\n".utf8)
        for field in response.headers {
            appendField(field.name, field.value, to: &out)
        }
        let informational = (100..<200).contains(response.status.code)
        if !informational {
            appendField("Content-Length", String(response.body.count), to: &out)
            appendField("Date", date, to: &out)
            if !keepAlive {
                appendField("Connection", "close", to: &out)
            } else if version == .http1_0 {
                appendField("Connection", "keep-alive", to: &out)
            }
        }
        out.append(contentsOf: [0x0D, 0x0A])
        return out
    }

    /// The interim `100 Continue` response.
    public static let continueHead: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    private static func appendField(_ name: String, _ value: String, to out: inout [UInt8]) {
        out.append(contentsOf: name.utf8)
        out.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
        out.append(contentsOf: value.utf8)
        out.append(contentsOf: [0x0D, 0x0A])
    }
}
