@testable import ChattFeed
import ChattModel
import TestSupport
import Testing

/// Bytes shaped like a feed's: rows with a random-looking id, so that some of it does not compress.
private func feedLikeBytes(rows: Int) -> [UInt8] {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    var text = "["
    for row in 0..<rows {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        if row > 0 { text += "," }
        text += #"["user\#(row % 37)","message \#(row)","\#(String(state, radix: 16))","2026-03-25T08:11:59.\#(100_000 + row)Z",null]"#
    }
    return Array((text + "]").utf8)
}

/// `GzipStream`: snapshots of a growing input, finished from a copy of the stream.
@Suite struct GzipStreamTests {
    @Test func aStreamsSnapshotsDecompressToTheSameBytes() async throws {
        let input = feedLikeBytes(rows: 400)
        let stream = try #require(GzipStream())
        var offset = 0
        var generator = SystemRandomNumberGenerator()
        while offset < input.count - 1 {
            let step = min(input.count - 1 - offset, Int.random(in: 1...3000, using: &generator))
            #expect(input[offset..<(offset + step)].withUnsafeBytes { stream.append($0) })
            offset += step
            let snapshot = try #require(stream.snapshot(finishingWith: [UInt8(ascii: "]")]))
            #expect(gunzip(snapshot.bytes) == Array(input[0..<offset]) + [UInt8(ascii: "]")])
        }
        #expect(stream.consumed == input.count - 1)
    }

    /// What makes a gzip tag honest across processes: the bytes depend on the input only, not on how it grew.
    @Test(arguments: [0, 1, 30, 2000])
    func everyHistoryOfAppendsAndSnapshotsGivesTheOneShotBytes(_ rows: Int) async throws {
        let input = feedLikeBytes(rows: rows)
        let prefix = Array(input.dropLast())
        let expected = try #require(Gzip.compress(input))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<8 {
            let stream = try #require(GzipStream())
            var offset = 0
            while offset < prefix.count {
                let step = min(prefix.count - offset, Int.random(in: 1...9000, using: &generator))
                #expect(prefix[offset..<(offset + step)].withUnsafeBytes { stream.append($0) })
                offset += step
                if Bool.random(using: &generator) {
                    let partial = try #require(stream.snapshot(finishingWith: [UInt8(ascii: "]")]))
                    #expect(partial.bytes == Gzip.compress(Array(prefix[0..<offset]) + [UInt8(ascii: "]")]))
                }
            }
            #expect(stream.snapshot(finishingWith: [UInt8(ascii: "]")])?.bytes == expected)
        }
    }

    @Test func anEmptyStreamFinishesTheSuffixAlone() async throws {
        let stream = try #require(GzipStream())
        let snapshot = try #require(stream.snapshot(finishingWith: Array("[]".utf8)))
        #expect(gunzip(snapshot.bytes) == Array("[]".utf8))
        #expect(snapshot.bytes == Gzip.compress(Array("[]".utf8)))
    }
}

/// The gzip tag: the identity hash, the coding and the level, so that a build gzipping at another level never
/// gives other bytes the same strong tag.
@Suite struct GzipTagTests {
    @Test func theGzipTagIsTheIdentityHashWithCodingAndLevel() async throws {
        let chatt = StoredChatt(name: "a", message: "b", id: "i", timestamp: "t", geodata: nil)
        let feed = try await ChattFeedCache().feed(.maps, from: InMemoryChattRepository([chatt]))
        let identity = feed.identity.etag.opaque
        #expect(await feed.gzipped().etag.opaque == identity + "-gzip6")
    }
}
