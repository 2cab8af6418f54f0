/// Encodes a Swift string as a JSON string literal (RFC 8259 §7), escaping `"`, `\` and control characters.
public enum JSONString {
    public static func encode(_ string: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count + 2)
        append(string, to: &out)
        return out
    }

    public static func append(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Byte by byte, with no temporary arrays: geodata strings carry quotes, so every /getmaps rebuild
        // comes through here (array literals per escape made it show up in profiles of the 90/10 mix).
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): escape(byte, to: &out)
            case 0x0A: escape(UInt8(ascii: "n"), to: &out)
            case 0x0D: escape(UInt8(ascii: "r"), to: &out)
            case 0x09: escape(UInt8(ascii: "t"), to: &out)
            case 0x00..<0x20, 0x7F:
                escape(UInt8(ascii: "u"), to: &out)
                out.append(UInt8(ascii: "0"))
                out.append(UInt8(ascii: "0"))
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0x0F))
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func escape(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        out.append(byte)
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
