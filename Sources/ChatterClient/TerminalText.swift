/// Text from a server or a poster made safe to show on a terminal.
///
/// A scalar that could move the cursor, recolour the screen, or reorder or hide what is shown is written as
/// `\u{HEX}` (upper-case hex, at least two digits, as in a Swift string literal), and a backslash as `\\`, so
/// every escape is unambiguous: text that merely looks like an escape shows as `\\u{…}`.
public enum TerminalText {
    /// Whether `scalar` must never reach a terminal as itself.
    ///
    /// - C0, DEL and C1 controls (`Cc`): ESC and CSI start escape sequences, BEL rings, CR and BS overwrite.
    /// - U+2028 and U+2029 (`Zl`, `Zp`): line breaks to some terminals and viewers, so they could forge lines.
    /// - Format characters (`Cf`): the bidi controls (U+061C, U+200E, U+200F, U+202A...U+202E,
    ///   U+2066...U+2069) reorder text, and the rest (U+200B, U+2060, U+FEFF, U+00AD, tags U+E0000...) are
    ///   invisible, so they could hide or disguise what is shown. ZWNJ and ZWJ are kept: they only join
    ///   neighbours (emoji sequences, Persian and Indic words) and can neither reorder nor hide a letter.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        // Printable ASCII is by far the common case; skip the property lookup for it.
        if (0x20...0x7E).contains(scalar.value) { return false }
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        case .format: return scalar != "\u{200C}" && scalar != "\u{200D}"
        default: return false
        }
    }

    /// `text` with every scalar `needsEscape` names as `\u{HEX}` and each `\` as `\\`.
    public static func escaped(_ text: String) -> String {
        escapedCharacters(text).joined()
    }

    /// `escaped(text)` cut into one piece per character of `text`, so it can be shortened without
    /// splitting an escape.
    static func escapedCharacters(_ text: String) -> [String] {
        text.map { character in
            guard character.unicodeScalars.contains(where: { $0 == "\\" || needsEscape($0) }) else {
                return String(character)
            }
            return character.unicodeScalars.map(escape).joined()
        }
    }

    /// One scalar as it is shown.
    private static func escape(_ scalar: Unicode.Scalar) -> String {
        if scalar == "\\" { return #"\\"# }
        guard needsEscape(scalar) else { return String(scalar) }
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return #"\u{"# + (hex.count < 2 ? "0" + hex : hex) + "}"
    }
}
