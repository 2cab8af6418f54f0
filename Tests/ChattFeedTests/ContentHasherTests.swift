@testable import ChattFeed
import Testing

/// The streaming hash must give exactly the one-shot values: tags are compared across processes and builds.
@Suite struct ContentHasherTests {
    @Test func everySplitOfTheBytesGivesTheOneShotHash() {
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 7, 8, 31, 32, 33, 63, 64, 65, 100, 1000] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
            let expected = ContentHash.hash(bytes)
            for _ in 0..<50 {
                var hasher = ContentHasher()
                var offset = 0
                while offset < bytes.count {
                    let step = Int.random(in: 0...min(40, bytes.count - offset), using: &generator)
                    hasher.update(Array(bytes[offset..<(offset + step)]))
                    offset += step
                }
                #expect(hasher.finalize() == expected, "length \(length)")
            }
        }
    }

    @Test func finalizingLeavesTheHasherGoingOn() {
        let first = Array("[[\"a\",\"b\"]".utf8)
        let second = Array(",[\"c\",\"d\"]]".utf8)
        var hasher = ContentHasher()
        hasher.update(first)
        #expect(hasher.finalize() == ContentHash.hash(first))
        hasher.update(second)
        #expect(hasher.finalize() == ContentHash.hash(first + second))
    }

    @Test func thePinnedValuesHoldWhenFedInPieces() {
        var empty = ContentHasher()
        empty.update(Array("[".utf8))
        empty.update(Array("]".utf8))
        #expect(ContentHash.hex(empty.finalize()) == "0a4fe2cf23a6e732")
        var xs = ContentHasher()
        for _ in 0..<10 { xs.update(Array(repeating: UInt8(ascii: "x"), count: 10)) }
        #expect(ContentHash.hex(xs.finalize()) == "f60362d044768997")
    }
}
