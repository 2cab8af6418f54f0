import Foundation

/// README.md at the package root, for tests that hold it to the code.
enum Readme {
    /// The README's text; empty when it cannot be read (the tests then fail saying so).
    static let text: String = {
        // Three levels up from this file: Tests/ChatterdKitTests/Readme.swift.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""
    }()

    /// Whether `text` has `word` with no name character (letter, digit, `-` or `_`) right before or after it, so
    /// that `--key` is not found in `--keepalive-timeout` nor `CHATTERD_PORT` in `CHATTERD_PORT_FOO`.
    static func mentions(_ text: String, _ word: String) -> Bool {
        func isNameCharacter(_ character: Character?) -> Bool {
            guard let character else { return false }
            return character.isLetter || character.isNumber || character == "-" || character == "_"
        }
        var searchStart = text.startIndex
        while let range = text.range(of: word, range: searchStart..<text.endIndex) {
            let before = range.lowerBound == text.startIndex ? nil : text[text.index(before: range.lowerBound)]
            let after = range.upperBound == text.endIndex ? nil : text[range.upperBound]
            if !isNameCharacter(before) && !isNameCharacter(after) { return true }
            searchStart = range.upperBound
        }
        return false
    }

    /// The cells of each Markdown table row (`| a | b |`) whose text mentions `word`.
    static func tableRows(mentioning word: String) -> [[String]] {
        text.split(separator: "\n").filter { $0.hasPrefix("|") && mentions(String($0), word) }.map { line in
            line.dropFirst().split(separator: "|", omittingEmptySubsequences: false).dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }
}
