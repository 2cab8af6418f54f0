import ASCII

/// Byte classes of the HTTP grammars (RFC 9110 §5.6, RFC 3986 §2), as pure functions of one byte.
/// Tokens and whitespace are public for the client's response parser; digits come from `ASCII`.
public enum ByteClass {
    /// Carriage return.
    static let cr: UInt8 = 0x0D
    /// Line feed.
    static let lf: UInt8 = 0x0A
    /// Space.
    static let sp: UInt8 = 0x20
    /// Horizontal tab.
    static let htab: UInt8 = 0x09

    /// `tchar` of RFC 9110 §5.6.2: the bytes of a token (methods, field names, codings).
    ///
    /// A bit per byte value: `"!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / DIGIT` below 64,
    /// `ALPHA / "^" / "_" / grave accent / "|" / "~"` from 64 to 127 (tests check all 256 bytes against the grammar).
    public static func isTokenChar(_ byte: UInt8) -> Bool {
        let below64: UInt64 = 0x03FF_6CFA_0000_0000
        let from64: UInt64 = 0x57FF_FFFF_C7FF_FFFE
        if byte < 64 { return (below64 >> byte) & 1 == 1 }
        if byte < 128 { return (from64 >> (byte - 64)) & 1 == 1 }
        return false
    }

    /// A byte allowed in a field value (RFC 9110 §5.5): HTAB, SP, VCHAR or obs-text.
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == htab || (byte >= sp && byte != 0x7F)
    }

    /// Optional whitespace (RFC 9110 §5.6.3).
    public static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == sp || byte == htab
    }

    /// `unreserved` or `sub-delims` of RFC 3986 §2.2–2.3 (the bytes of a reg-name besides `%`).
    static func isUnreservedOrSubDelim(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "="):
            return true
        default:
            return false
        }
    }

    /// ASCII lower case (header names and codings compare case-insensitively).
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// Whether `bytes[range]` equals `lowercased` (lower-case ASCII bytes), ignoring ASCII case.
    static func equalsIgnoringCase(_ bytes: [UInt8], _ range: Range<Int>, _ lowercased: [UInt8]) -> Bool {
        guard range.count == lowercased.count else { return false }
        var index = range.lowerBound
        for byte in lowercased {
            guard Self.lowercased(bytes[index]) == byte else { return false }
            index += 1
        }
        return true
    }

    /// `range` without leading and trailing optional whitespace.
    static func trimmingWhitespace(_ bytes: [UInt8], _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, isWhitespace(bytes[lower]) { lower += 1 }
        while upper > lower, isWhitespace(bytes[upper - 1]) { upper -= 1 }
        return lower..<upper
    }

    /// Calls `body` with each element of the comma-separated list `bytes[range]`, whitespace trimmed
    /// (RFC 9110 §5.6.1); empty elements are passed too, so callers can reject them.
    static func forEachListElement(_ bytes: [UInt8], _ range: Range<Int>, _ body: (Range<Int>) -> Void) {
        var elementStart = range.lowerBound
        while true {
            let rest = elementStart..<range.upperBound
            let elementEnd = bytes[rest].firstIndex(of: UInt8(ascii: ",")) ?? range.upperBound
            body(trimmingWhitespace(bytes, elementStart..<elementEnd))
            guard elementEnd < range.upperBound else { return }
            elementStart = elementEnd + 1
        }
    }
}
