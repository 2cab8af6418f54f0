import JSON
import Testing

/// JSON string literal escaping (RFC 8259 §7).
@Suite struct JSONStringTests {
    private func encoded(_ string: String) -> String { String(decoding: JSONString.encode(string), as: UTF8.self) }

    @Test func escapesQuoteAndBackslash() {
        #expect(encoded(#"a"b\c"#) == #""a\"b\\c""#)
    }

    @Test func escapesControlCharacters() {
        #expect(encoded("\n\r\t") == #""\n\r\t""#)
        #expect(encoded("\u{0}") == #""\u0000""#)
        #expect(encoded("\u{1}\u{1F}\u{7F}") == #""\u0001\u001f\u007f""#)
    }

    @Test func passesUnicodeThroughAsUTF8() {
        let text = "é😀/<>"
        #expect(JSONString.encode(text) == [UInt8(ascii: "\"")] + Array(text.utf8) + [UInt8(ascii: "\"")])
    }

    @Test func appendsAfterExistingBytes() {
        var out = Array("x:".utf8)
        JSONString.append("y", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #"x:"y""#)
    }
}
