import ASCII

extension JSONParser {
    /// Parses the string starting at the opening quote at `index` and returns its decoded UTF-8 bytes.
    ///
    /// The input was validated as UTF-8 up front, and escapes only produce whole scalars,
    /// so the result is always valid UTF-8.
    mutating func parseStringBytes() throws(JSONParseError) -> [UInt8] {
        index += 1  // opening quote
        var out: [UInt8] = []
        var runStart = index
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                out.append(contentsOf: bytes[runStart..<index])
                index += 1
                return out
            case UInt8(ascii: "\\"):
                out.append(contentsOf: bytes[runStart..<index])
                try parseEscape(into: &out)
                runStart = index
            case 0x00..<0x20:
                // RFC 8259 §7: control characters must be escaped.
                throw .syntax
            default:
                index += 1
            }
        }
        throw .syntax
    }

    /// Parses the escape sequence whose backslash is at `index` and appends what it stands for.
    private mutating func parseEscape(into out: inout [UInt8]) throws(JSONParseError) {
        index += 1  // backslash
        guard let byte = peek() else { throw .syntax }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"): UTF8.encode(try parseUnicodeEscape()) { out.append($0) }
        default: throw .syntax
        }
    }

    /// Parses the `XXXX` of `\uXXXX`, and a following `\uXXXX` low surrogate when the first is a high one.
    private mutating func parseUnicodeEscape() throws(JSONParseError) -> Unicode.Scalar {
        let unit = try parseHex4()
        let scalar: UInt32
        switch unit {
        case 0xD800...0xDBFF:
            guard peek() == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                throw .loneSurrogate
            }
            index += 2
            let low = try parseHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw .loneSurrogate }
            scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
        case 0xDC00...0xDFFF:
            throw .loneSurrogate
        default:
            scalar = unit
        }
        // Invariant: surrogates were handled above, and a pair combines to at most U+10FFFF.
        guard let result = Unicode.Scalar(scalar) else { throw .loneSurrogate }
        return result
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek(), let digit = ASCII.hexValue(byte) else { throw .syntax }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}
