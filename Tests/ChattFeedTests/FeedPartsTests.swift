@testable import ChattFeed
import ChattModel
import TestSupport
import Foundation
import Testing

/// The pieces under the feed cache: content hash, gzip, the single-flight lazy value, chatt ids.
@Suite struct FeedPartsTests {
    @Test func theHashDependsOnEveryByteAndTheLength() {
        let base = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        let hash = ContentHash.hash(base)
        #expect(ContentHash.hash(Array(base)) == hash)
        for position in base.indices {
            var changed = base
            changed[position] ^= 0x01
            #expect(ContentHash.hash(changed) != hash, "flip at \(position)")
        }
        #expect(ContentHash.hash(base + [0]) != hash)
        #expect(ContentHash.hash([]) != ContentHash.hash([0]))
    }

    @Test func distinctBodiesGetDistinctHashes() {
        var seen = Set<UInt64>()
        for serial in 0..<20_000 {
            seen.insert(ContentHash.hash(Array(#"[["user","message \#(serial)"]]"#.utf8)))
        }
        #expect(seen.count == 20_000)
    }

    @Test func theHashIsPinnedSoEveryBuildTagsAFeedAlike() {
        // Servers of different builds may share a database during a rolling upgrade; their tags must agree.
        #expect(ContentHash.hex(ContentHash.hash(Array("[]".utf8))) == "0a4fe2cf23a6e732")
        #expect(ContentHash.hex(ContentHash.hash(Array(repeating: UInt8(ascii: "x"), count: 100))) == "f60362d044768997")
        #expect(ContentHash.hex(1) == "0000000000000001")
    }

    @Test(arguments: [0, 1, 100, 70_000])
    func gzipRoundTrips(_ count: Int) throws {
        let input = (0..<count).map { UInt8(truncatingIfNeeded: ($0 * $0) >> 3) }
        let compressed = try #require(Gzip.compress(input))
        #expect(compressed.starts(with: [0x1F, 0x8B, 0x08]), "a gzip member: magic and deflate")
        #expect(gunzip(compressed) == input)
    }

    @Test func gzipOutputIsTheSameInEveryProcess() throws {
        // The gzip tag is derived from the plain body, so equal input must give equal bytes (no time stamp).
        let input = Array(String(repeating: #"["a","b"],"#, count: 500).utf8)
        let first = try #require(Gzip.compress(input))
        #expect(Gzip.compress(input) == first)
    }
}
