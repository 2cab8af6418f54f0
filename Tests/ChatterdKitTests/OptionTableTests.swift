@testable import ChatterdKit
import Testing

/// The option tables against what is written about them: `--help` and the README name every flag and variable.
@Suite struct OptionTableTests {
    /// Every flag of every command, and its variable.
    private static let names: [(command: String, name: String)] = Command.optionTypes.flatMap { type in
        type.flagNames.flatMap { [(type.command, $0), (type.command, type.variable(for: $0))] }
    }

    @Test func mentionsNeedsAWholeName() {
        #expect(Readme.mentions("`--key FILE`", "--key"))
        #expect(!Readme.mentions("--keepalive-timeout --key-file", "--key"))
        #expect(!Readme.mentions("CHATTERD_PORT_FOO", "CHATTERD_PORT"))
    }

    @Test func theReadmeListsEveryFlagAndVariableOfEveryCommand() {
        let found = Readme.text.hasPrefix("# chatterd")
        #expect(found, "README.md not found from \(#filePath)")
        // A list of what is missing, so a failure names it instead of printing the whole README.
        let missing = Self.names.filter { !Readme.mentions(Readme.text, $0.name) }.map { "\($0.command) \($0.name)" }
        #expect(missing.isEmpty, "README.md does not mention: \(missing.joined(separator: ", "))")
        let fallback = Readme.mentions(Readme.text, "DATABASE_URL")
        #expect(fallback, "README.md does not mention DATABASE_URL")
    }

    @Test func helpListsEveryFlagAndVariableOfEveryCommand() {
        let missing = Self.names.filter { !Readme.mentions(usage, $0.name) }.map { "\($0.command) \($0.name)" }
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
