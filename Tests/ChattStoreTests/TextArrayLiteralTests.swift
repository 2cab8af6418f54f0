@testable import ChattStore
import Testing

@Suite struct TextArrayLiteralTests {
    @Test func everyValueIsQuotedAndNilIsNull() {
        #expect(TextArrayLiteral.encode([]) == "{}")
        #expect(TextArrayLiteral.encode(["a", nil, ""]) == #"{"a",NULL,""}"#)
        #expect(TextArrayLiteral.encode([#"say "hi" \o/"#]) == #"{"say \"hi\" \\o/"}"#)
        #expect(TextArrayLiteral.encode(["NULL", "{x,y}"]) == #"{"NULL","{x,y}"}"#)
    }

    /// Values the array parser treats specially, plus multi-byte text.
    static let awkward: [String?] = [
        "plain", nil, "", "NULL", "null", " padded\t", "{braces}", "a,b", #"quote""#, #"back\slash"#, #"\""#,
        #"[42.2936,-83.7166,"North","walking"]"#, "é e\u{301} 👨‍👩‍👧‍👦 \u{FEFF}", "\r\n", "'single'",
    ]
}

extension DatabaseTests {
    @Suite struct TextArrayLiteralRoundTripTests {
        @Test func serverReadsBackExactlyTheValuesSent() async throws {
            try await TestDatabase.with(migrated: false) { database throws in
                let values = TextArrayLiteralTests.awkward
                let stored = try database.column(
                    "SELECT value FROM unnest($1::text[]) WITH ORDINALITY AS t(value, position) ORDER BY position",
                    [TextArrayLiteral.encode(values)])
                // Compare bytes: String == treats canonically equivalent forms (é vs e + U+0301) as equal.
                #expect(stored.map { $0.map { Array($0.utf8) } } == values.map { $0.map { Array($0.utf8) } })
            }
        }
    }
}
