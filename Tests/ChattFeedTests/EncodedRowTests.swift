@testable import ChattFeed
import ChattModel
import JSON
import Testing

/// `EncodedRow.elements(of:)`: the elements of a row as `ChattRowEncoder` writes it, found without a parse.
@Suite struct EncodedRowTests {
    static func row(_ chatt: StoredChatt) -> [UInt8] {
        var bytes: [UInt8] = []
        ChattRowEncoder.appendRow(chatt, includingGeodata: true, to: &bytes)
        return bytes
    }

    @Test func findsEachStringWithItsEscapesAndNull() throws {
        let chatt = StoredChatt(
            name: #"q"b\"#, message: "line\nbreak\u{1}\u{7F} é 😀 \\\"", id: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
            timestamp: "2026-12-07T15:00:00.000001Z", geodata: #"[1.5,2.5,"say \"hi\"","\u0041\\"]"#)
        let bytes = Self.row(chatt)
        let elements = try #require(EncodedRow.elements(of: bytes[...]))
        #expect(elements.count == 5)
        let decoded = try elements.map { range -> String in
            guard case .string(let text) = try JSONParser.parse(Array(bytes[range])) else { return "not a string" }
            return text
        }
        #expect(decoded == [chatt.name, chatt.message, chatt.id, chatt.timestamp, chatt.geodata!])
        // Each is the bytes `JSONString` writes for it.
        for (range, text) in zip(elements, decoded) {
            var escaped: [UInt8] = []
            JSONString.append(text, to: &escaped)
            #expect(Array(bytes[range]) == escaped)
        }
        let unlocated = Self.row(StoredChatt(name: "a", message: "", id: "i", timestamp: "t", geodata: nil))
        let last = try #require(EncodedRow.elements(of: unlocated[...])?.last)
        #expect(Array(unlocated[last]) == Array("null".utf8))
        #expect(EncodedRow.elements(of: unlocated[...])?.count == 5)
    }

    @Test func findsThemInASliceOfALargerBody() throws {
        let row = Self.row(StoredChatt(name: "a", message: "b", id: "c", timestamp: "d", geodata: nil))
        let bytes = Array("xx".utf8) + row
        let elements = try #require(EncodedRow.elements(of: bytes[2...]))
        let texts = elements.map { String(decoding: bytes[$0], as: UTF8.self) }
        #expect(texts == [#""a""#, #""b""#, #""c""#, #""d""#, "null"])
    }

    @Test(arguments: [
        "", "[", "[]", #"["a""#, #"["a",]"#, #"["a"x]"#, #"["a"]x"#, #"["a\"]"#, "[nul]", #"["a" ,"b"]"#, "[1]",
    ])
    func isNilForWhatTheEncoderNeverWrites(_ text: String) {
        #expect(EncodedRow.elements(of: Array(text.utf8)[...]) == nil)
    }
}
