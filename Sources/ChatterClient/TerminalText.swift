/// Text from the server made safe to print on a terminal.
enum TerminalText {
    /// One line without control characters, so no escape sequence from a chatt or a server reaches the terminal.
    static func printable(_ text: String) -> String {
        let scalars = text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }
        return String(String.UnicodeScalarView(scalars))
    }
}
