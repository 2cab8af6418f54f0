import HTTPCore

/// Request ids: the client's `X-Request-Id` when it is safe to log and echo, else one made here.
///
/// A made id is `<process prefix>-<connection>-<request on that connection>` (e.g. `9f3c01ab-1a-3`): unique within
/// the process without any shared counter, and across processes thanks to the random prefix.
enum RequestID {
    /// The header that carries the id, both ways.
    static let headerName = "X-Request-Id"
    /// Longest client id accepted; longer ones are replaced rather than truncated.
    static let maxLength = 64

    /// Whether `id` may be used as given: 1 to 64 characters from `A-Z a-z 0-9 - _ . :`, which need no quoting
    /// in a log line and cannot inject anything into one.
    static func isAcceptable(_ id: String) -> Bool {
        let bytes = id.utf8
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: ":"):
                true
            default: false
            }
        }
    }

    /// The id the client gave in `headers`, if it may be used: exactly one `X-Request-Id` field, and that one
    /// acceptable. Of two or more, none is taken: which to believe is a guess, and any may be someone else's.
    static func given(in headers: HTTPHeaders) -> String? {
        let values = headers.values(headerName)
        guard values.count == 1, let id = values.first, isAcceptable(id) else { return nil }
        return id
    }

    /// A random 8-hex-digit prefix, made once per server.
    static func randomPrefix() -> String {
        let value = UInt32.random(in: .min ... .max)
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// The fixed start of the ids made for one connection.
    static func stem(prefix: String, connectionID: Int) -> String {
        "\(prefix)-\(String(connectionID, radix: 16))-"
    }
}
