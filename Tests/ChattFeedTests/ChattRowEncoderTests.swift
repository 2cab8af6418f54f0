import ChattFeed
import ChattModel
import HTTPCore
import JSON
import Testing

@Suite struct ChattRowEncoderTests {
    static let alice = StoredChatt(
        name: "alice", message: "hi", id: "3f2b0c9e-8a4d-4f7e-9a51-2c6d1e0b7a11",
        timestamp: "2026-03-25T08:11:59.123456Z", geodata: #"[42.2936,-83.7166,"North","walking"]"#)
    static let bob = StoredChatt(
        name: "bob", message: "no location", id: "9c0e0000-0000-4000-8000-000000000001",
        timestamp: "2026-03-25T08:12:03.000001Z", geodata: nil)
    static let tricky = StoredChatt(
        name: "q\"b\\s/", message: "line\nret\rtab\tbell\u{07}del\u{7F}", id: "i", timestamp: "t",
        geodata: "é😀👨‍👩‍👧‍👦")

    @Test func emptyStoreIsAnEmptyArray() {
        #expect(ChattRowEncoder.mapsRows([]) == Array("[]".utf8))
        #expect(ChattRowEncoder.chattsRows([]) == Array("[]".utf8))
    }

    @Test func mapsRowsHaveFiveElementsWithNullGeodataInOrder() {
        let expected =
            #"[["alice","hi","3f2b0c9e-8a4d-4f7e-9a51-2c6d1e0b7a11","2026-03-25T08:11:59.123456Z","#
            + #""[42.2936,-83.7166,\"North\",\"walking\"]"],"#
            + #"["bob","no location","9c0e0000-0000-4000-8000-000000000001","2026-03-25T08:12:03.000001Z",null]]"#
        #expect(ChattRowEncoder.mapsRows([Self.alice, Self.bob]) == Array(expected.utf8))
    }

    @Test func chattsRowsHaveFourElements() {
        let expected =
            #"[["bob","no location","9c0e0000-0000-4000-8000-000000000001","2026-03-25T08:12:03.000001Z"],"#
            + #"["alice","hi","3f2b0c9e-8a4d-4f7e-9a51-2c6d1e0b7a11","2026-03-25T08:11:59.123456Z"]]"#
        #expect(ChattRowEncoder.chattsRows([Self.bob, Self.alice]) == Array(expected.utf8))
    }

    @Test func escapesQuotesBackslashesAndControlsAndKeepsNonASCIIRaw() {
        let expected = #"[["q\"b\\s/","line\nret\rtab\tbell\u0007del\u007f","i","t","é😀👨‍👩‍👧‍👦"]]"#
        #expect(ChattRowEncoder.mapsRows([Self.tricky]) == Array(expected.utf8))
    }

    /// The block-copy fast path must write exactly what JSONString writes, for every ASCII byte, short and long.
    @Test func writesStringsExactlyAsJSONString() {
        let samples =
            (0..<128).map { String(UnicodeScalar(UInt8($0))) } + ["é", "a\u{7F}b", String(repeating: "é😀", count: 20)]
        for sample in samples {
            for text in [sample, sample + String(repeating: "x", count: 30)] {
                let chatt = StoredChatt(name: text, message: text, id: text, timestamp: text, geodata: nil)
                let field = JSONString.encode(text)
                let expected =
                    Array("[[".utf8) + field + [0x2C] + field + [0x2C] + field + [0x2C] + field + Array("]]".utf8)
                #expect(ChattRowEncoder.chattsRows([chatt]) == expected, "\(Array(text.utf8))")
            }
        }
    }

    @Test func outputParsesBackToTheSameStrings() throws {
        let chatts = [Self.alice, Self.bob, Self.tricky]
        let parsed = try JSONParser.parse(ChattRowEncoder.mapsRows(chatts))
        let expected = JSONValue.array(
            chatts.map { chatt in
                .array([
                    .string(chatt.name), .string(chatt.message), .string(chatt.id), .string(chatt.timestamp),
                    chatt.geodata.map(JSONValue.string) ?? .null,
                ])
            })
        #expect(parsed == expected)
    }
}
