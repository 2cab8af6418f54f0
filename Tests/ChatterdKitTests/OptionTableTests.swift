@testable import ChatterdKit
import Foundation
import Testing

/// The option tables against what is written about them: `--help` and the README name every flag and variable.
@Suite struct OptionTableTests {
    /// README.md at the package root, three levels above this file.
    private static let readme: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""
    }()

    /// Every flag of every command, with its variable.
    private static let flagsAndVariables: [(command: String, flag: String, variable: String)] =
        Command.optionTypes.flatMap { type in
            type.flagNames.map { (type.command, $0, type.variable(for: $0)) }
        }

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

    @Test func mentionsNeedsAWholeName() {
        #expect(Self.mentions("`--key FILE`", "--key"))
        #expect(!Self.mentions("--keepalive-timeout --key-file", "--key"))
        #expect(!Self.mentions("CHATTERD_PORT_FOO", "CHATTERD_PORT"))
    }

    @Test func theReadmeListsEveryFlagAndVariableOfEveryCommand() {
        let found = Self.readme.hasPrefix("# chatterd")
        #expect(found, "README.md not found from \(#filePath)")
        // Plain Bools, so a failure names what is missing instead of printing the whole README.
        let missing = Self.flagsAndVariables.flatMap { [($0.command, $0.flag), ($0.command, $0.variable)] }
            .filter { !Self.mentions(Self.readme, $0.1) }.map { "\($0.0) \($0.1)" }
        #expect(missing.isEmpty, "README.md does not mention: \(missing.joined(separator: ", "))")
        let fallback = Self.mentions(Self.readme, "DATABASE_URL")
        #expect(fallback, "README.md does not mention DATABASE_URL")
    }

    @Test func helpListsEveryFlagAndVariableOfEveryCommand() {
        let missing = Self.flagsAndVariables.flatMap { [($0.command, $0.flag), ($0.command, $0.variable)] }
            .filter { !Self.mentions(usage, $0.1) }.map { "\($0.0) \($0.1)" }
        #expect(missing.isEmpty, "--help does not list: \(missing.joined(separator: ", "))")
    }

    @Test func noCommandSpellsAFlagTwice() {
        for type in Command.optionTypes {
            #expect(Set(type.flagNames).count == type.flagNames.count, "\(type.command) has a flag twice")
        }
    }

    @Test func helpShowsEachDefaultFromTheOptionsThemselves() {
        #expect(usage.contains("(default 443)") && usage.contains("(default 65536)"))
        #expect(usage.contains("(default 60 s)") && usage.contains("(default logfmt)"))
        #expect(usage.split(separator: "\n").allSatisfy { $0.count <= Usage.width }, "a --help line is too long")
    }
}
