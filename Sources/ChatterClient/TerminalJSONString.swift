/// JSON string literals (RFC 8259 §7) that are also safe on a terminal.
///
/// Besides what JSON requires (`"`, `\` and C0 controls), every scalar `TerminalText.needsEscape` names is
/// written as `\uXXXX` (a surrogate pair above U+FFFF), so a JSON parser still reads back exactly the server's
/// string. The server's own encoder (`JSONString`) stays as it is: its bytes go to clients, not to terminals.
enum TerminalJSONString {
    /// Appends `string` as a quoted JSON string to `out`.
    static func append(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"", "\\": out += [UInt8(ascii: "\\"), UInt8(scalar.value)]
            case "\n": out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case "\r": out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case "\t": out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case _ where TerminalText.needsEscape(scalar):
                for unit in scalar.utf16 { appendEscape(unit, to: &out) }
            default: out.append(contentsOf: scalar.utf8)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `\u` and four lower-case hex digits, as the server's encoder writes them.
    private static func appendEscape(_ unit: UInt16, to out: inout [UInt8]) {
        out += [UInt8(ascii: "\\"), UInt8(ascii: "u")]
        for shift in stride(from: 12, through: 0, by: -4) {
            let nibble = UInt8((unit >> UInt16(shift)) & 0xF)
            out.append(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10)
        }
    }
}
