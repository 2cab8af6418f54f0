@testable import ChatterClient
import JSON
import Testing

/// Every code point a hostile server or poster could use to drive a terminal or reorder what it shows.
let hostileScalars: [Unicode.Scalar] =
    ((0x00...0x1F).map { $0 } + [0x7F] + (0x80...0x9F).map { $0 }
    + [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]
    + [0x2028, 0x2029, 0x200B, 0x2060, 0xFEFF, 0x00AD, 0xE0041, 0xE007F])
    .map { Unicode.Scalar(UInt32($0))! }

/// A string holding every hostile scalar once, between ordinary letters.
let everyHostileScalar = "a" + hostileScalars.map { String($0) + "b" }.joined()

/// The hostile scalars found in `text`, which must be none.
func rawHostileScalars(_ text: String) -> [Unicode.Scalar] {
    text.unicodeScalars.filter { hostileScalars.contains($0) && $0 != "\n" }
}

@Suite struct TerminalTextTests {
    @Test func everyControlBidiAndInvisibleScalarIsEscaped() {
        for scalar in hostileScalars {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            let expected = "x\\u{" + (hex.count == 1 ? "0" + hex : hex) + "}y"
            #expect(TerminalText.escaped("x\(scalar)y") == expected, "U+\(hex)")
        }
        #expect(rawHostileScalars(TerminalText.escaped(everyHostileScalar)).isEmpty)
    }

    @Test func escapesAreUnambiguous() {
        let text = "\u{1B}[31m\u{7}red\u{202E}txt.exe \\u{1B} C:\\dir"
        #expect(TerminalText.escaped(text) == #"\u{1B}[31m\u{07}red\u{202E}txt.exe \\u{1B} C:\\dir"#)
    }

    @Test func ordinaryTextIsUntouched() {
        let text = "Zoë 北京 مرحبا 👨‍👩‍👧 کتاب‌ها … ~!@#$%^&*()_+{}|:\"<>?`-=[];',./"
        #expect(TerminalText.escaped(text) == text, "letters, emoji joined by ZWJ, Persian ZWNJ, punctuation")
    }
}

@Suite struct HostileRowsTests {
    @Test func tableEscapesEveryCell() {
        let rows: [[String?]] = [["\u{1B}]0;owned\u{7}", "\u{202E}gnp.exe\u{9B}2J", "id", "2026-03-25T08:11:59Z"]]
        let lines = TableFormatter.render(rows, maps: false).split(separator: "\n")
        #expect(lines[1] == #"2026-03-25 08:11:59  \u{1B}]0;owned\u{07}  \u{202E}gnp.exe\u{9B}2J"#)
    }

    @Test func tableEscapesEveryHostileScalarAndLocationColumns() {
        let geodata = #"[1,2,"\u202eN","\u009bfast"]"#
        let rows: [[String?]] = [[everyHostileScalar, everyHostileScalar, "id", everyHostileScalar, geodata]]
        let text = TableFormatter.render(rows, maps: true)
        #expect(rawHostileScalars(text).isEmpty)
        #expect(text.contains(#"\u{202E}N "#) && text.contains(#"\u{9B}fast"#), "facing and speed, within 12")
    }

    @Test func shorteningNeverSplitsAnEscape() {
        let limit = TableFormatter.maxMessageWidth
        let message = String(repeating: "x", count: limit - 4) + "\u{202E}" + String(repeating: "y", count: 10)
        let line = TableFormatter.render([["n", message, "id", "t"]], maps: false).split(separator: "\n")[1]
        #expect(line.hasSuffix(String(repeating: "x", count: limit - 4) + "…"), "the 8-character escape does not fit")
        let backslashes = String(repeating: "\\", count: limit)
        let cut = TableFormatter.render([["n", backslashes, "id", "t"]], maps: false).split(separator: "\n")[1]
        #expect(cut.hasSuffix(String(repeating: "\\", count: limit - 2) + "…"), "whole \\\\ pairs only")
    }

    @Test func jsonEscapesAndRoundTrips() throws {
        let rows: [[String?]] = [[everyHostileScalar, "q\"uote\\ \u{1B}[2J", "id", "t", nil]]
        let text = RowsJSONFormatter.render(rows)
        #expect(rawHostileScalars(text).isEmpty)
        #expect(text.contains(#"\u001b[2J"#) && text.contains(#"\u009b"#) && text.contains(#"\u202e"#))
        #expect(text.contains(#"\udb40\udc41"#), "a tag character above U+FFFF as a surrogate pair")
        let items = try #require(try JSONParser.parse(text).arrayItems)
        #expect(items.map { ($0.arrayItems ?? []).map(\.stringValue) } == rows, "decodes to the server's strings")
    }

    @Test func geoJSONEscapesAndRoundTrips() throws {
        let geodata = #"[1,2,"\u202eNorth\u0007","\u0085fast"]"#
        let rows: [[String?]] = [[everyHostileScalar, "\u{2066}m\u{2069}", "\u{9B}id", "\u{1B}t", geodata]]
        let output = GeoJSONFormatter.render(rows)
        #expect(rawHostileScalars(output.text).isEmpty)
        let feature = try #require(try JSONParser.parse(output.text)["features"]?.arrayItems?.first)
        #expect(feature["id"] == .string("\u{9B}id"))
        let properties = try #require(feature["properties"])
        let expected = [
            "name": everyHostileScalar, "message": "\u{2066}m\u{2069}", "id": "\u{9B}id", "timestamp": "\u{1B}t",
            "facing": "\u{202E}North\u{7}", "speed": "\u{85}fast",
        ]
        for (key, value) in expected {
            #expect(properties[key] == .string(value), "property \(key)")
        }
    }
}
