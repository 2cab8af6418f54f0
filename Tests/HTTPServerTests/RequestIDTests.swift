import HTTPCore
@testable import HTTPServer
import Testing

@Suite struct RequestIDTests {
    @Test func acceptsShortIDsOfSafeCharacters() {
        for id in ["a", "Z9", "req-1_2.3:4", "550e8400-e29b-41d4-a716-446655440000", String(repeating: "x", count: 64)] {
            #expect(RequestID.isAcceptable(id), "\(id)")
        }
    }

    @Test func refusesEverythingElse() {
        let refused = ["", String(repeating: "x", count: 65), "a b", "a\tb", "a\"b", "a=b", "a/b", "a\\b", "ü", "a\nb"]
        for id in refused { #expect(!RequestID.isAcceptable(id), "\(id)") }
        for byte in UInt8(0)...UInt8(127) {
            let character = Character(Unicode.Scalar(byte))
            let safe = character.isASCII && (character.isLetter || character.isNumber || "-_.:".contains(character))
            #expect(RequestID.isAcceptable(String(character)) == safe, "byte \(byte)")
        }
    }

    @Test func onlyOneAcceptableFieldIsTaken() {
        func given(_ values: [String]) -> String? {
            RequestID.given(in: HTTPHeaders([("Host", "x")] + values.map { ("X-Request-Id", $0) }))
        }
        #expect(given(["abc"]) == "abc")
        #expect(given([]) == nil)
        #expect(given(["a b"]) == nil)
        #expect(given(["first", "second"]) == nil, "two fields: neither is believed")
        #expect(given(["same", "same"]) == nil)
        #expect(given(["ok", "not ok"]) == nil)
        #expect(RequestID.given(in: HTTPHeaders([("x-request-id", "lower")])) == "lower", "names ignore case")
    }

    @Test func prefixesAreEightHexDigits() {
        for _ in 0..<100 {
            let prefix = RequestID.randomPrefix()
            #expect(prefix.wholeMatch(of: #/[0-9a-f]{8}/#) != nil, "\(prefix)")
        }
        #expect(RequestID.stem(prefix: "0000abcd", connectionID: 255) == "0000abcd-ff-")
    }
}
