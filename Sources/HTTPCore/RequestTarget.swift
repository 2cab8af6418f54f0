/// A validated request target (RFC 9112 §3.2) split into path and query.
struct RequestTarget: Equatable {
    /// The target exactly as sent.
    var target: String
    /// The path: origin-form up to `?`; for absolute-form, what follows the authority (`/` if empty).
    var path: String
    /// Everything after the first `?`, or nil without one.
    var query: String?

    /// Parses `bytes[range]`, or returns nil for `.invalidTarget`.
    ///
    /// Only bytes 0x21–0x7E are allowed and no `#` (a fragment is never sent, RFC 9112 §3.2).
    /// Percent-escapes are kept as sent.
    static func parse(_ bytes: [UInt8], _ range: Range<Int>, method: HTTPMethod) -> RequestTarget? {
        for byte in bytes[range] {
            guard byte >= 0x21, byte <= 0x7E, byte != UInt8(ascii: "#") else { return nil }
        }
        guard let first = range.first else { return nil }
        if bytes[first] == UInt8(ascii: "/") {
            return split(bytes, range, pathStart: first)
        }
        if range.count == 1, bytes[first] == UInt8(ascii: "*") {
            // asterisk-form is only for a server-wide OPTIONS (RFC 9112 §3.2.4).
            return method == .OPTIONS ? RequestTarget(target: "*", path: "*", query: nil) : nil
        }
        return parseAbsoluteForm(bytes, range)
    }

    /// absolute-form (RFC 9112 §3.2.2): `http://` or `https://`, a host with optional port, then path and query.
    private static func parseAbsoluteForm(_ bytes: [UInt8], _ range: Range<Int>) -> RequestTarget? {
        let schemeEnd: Int
        if hasPrefix(bytes, range, httpScheme) {
            schemeEnd = range.lowerBound + httpScheme.count
        } else if hasPrefix(bytes, range, httpsScheme) {
            schemeEnd = range.lowerBound + httpsScheme.count
        } else {
            return nil
        }
        let authorityEnd =
            bytes[schemeEnd..<range.upperBound].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }
            ?? range.upperBound
        guard HostSyntax.isValid(bytes, schemeEnd..<authorityEnd) else { return nil }
        return split(bytes, range, pathStart: authorityEnd)
    }

    /// Splits `bytes[pathStart..<range.upperBound]` at the first `?`.
    private static func split(_ bytes: [UInt8], _ range: Range<Int>, pathStart: Int) -> RequestTarget {
        let rest = pathStart..<range.upperBound
        let questionMark = bytes[rest].firstIndex(of: UInt8(ascii: "?"))
        let pathEnd = questionMark ?? range.upperBound
        let path = pathStart == pathEnd ? "/" : String(decoding: bytes[pathStart..<pathEnd], as: UTF8.self)
        return RequestTarget(
            target: String(decoding: bytes[range], as: UTF8.self),
            path: path,
            query: questionMark.map { String(decoding: bytes[($0 + 1)..<range.upperBound], as: UTF8.self) }
        )
    }

    private static let httpScheme = Array("http://".utf8)
    private static let httpsScheme = Array("https://".utf8)

    private static func hasPrefix(_ bytes: [UInt8], _ range: Range<Int>, _ prefix: [UInt8]) -> Bool {
        let count = prefix.count
        guard range.count >= count else { return false }
        return ByteClass.equalsIgnoringCase(bytes, range.lowerBound..<(range.lowerBound + count), prefix)
    }
}
