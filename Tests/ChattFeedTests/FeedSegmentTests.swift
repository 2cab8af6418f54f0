@testable import ChattFeed
import ChattModel
import HTTPCore
import Locking
import TestSupport
import Testing

/// Feed versions made of shared segments: each version's bytes are a rebuilt feed's in both forms, versions share
/// what they have in common, and a segment no version or response holds any more is freed.
@Suite struct FeedSegmentTests {
    let repository = InMemoryChattRepository()
    let feeds: ChattFeed
    private let serial = Locked(0)

    init() {
        feeds = ChattFeed(repository: repository)
        feeds.listening(true)
    }

    /// Stores `count` chatts and reads the feed in full.
    private func read(_ kind: ChattFeed.Kind, after count: Int) async throws -> EncodedFeed {
        for _ in 0..<count { try await add() }
        return try await feeds.read(kind)
    }

    /// Posts `size` chatts, and returns the version that took them in.
    private func post(_ size: Int, _ kind: ChattFeed.Kind) async throws -> EncodedFeed {
        for _ in 0..<size { try await add() }
        return try await feeds.read(kind)
    }

    private func add() async throws {
        let next = serial.withLock { serial in
            serial += 1
            return serial
        }
        try await repository.add(variedChatt(next))
    }

    @Test(arguments: [ChattFeed.Kind.maps, .chatts])
    func everyVersionOfManyBatchesIsTheRebuiltFeedInBothFormsAndSharesTheRead(
        _ kind: ChattFeed.Kind
    ) async throws {
        // Rows posted after the read stay under half of it, so that no merge reaches the read's segment.
        let first = try await read(kind, after: 400)
        let readBytes = try #require(first.identity.body.segments.first)
        let readGzip = try #require(await first.gzipped().body.segments.first)
        for round in 0..<100 {
            let feed = try await post([1, 1, 2, 1, 1, 3, 1, 1][round % 8], kind)
            try await expectSameAsRebuilt(feed, kind, repository)
            let identity = feed.identity.body.bytes
            let gzip = await feed.gzipped()
            #expect(gunzip(gzip.body.bytes) == identity, "round \(round)")
            #expect(
                gzip.body.bytes == Gzip.compress(identity, pieceEnds: feedPieceEnds(identity)),
                "one-shot gzip of the same bytes")
            #expect(address(feed.identity.body.segments[0]) == address(readBytes), "the full read is shared")
            #expect(address(gzip.body.segments[0]) == address(readGzip), "so is its compressed form")
            #expect(feed.identity.body.segments.count <= 12 && gzip.body.segments.count <= 12)
        }
    }

    @Test func aReaderOfAnOldVersionAloneHoldsOnlyWhatNoNewerOneSharesAndItGoesWithIt() async throws {
        let first = try await read(.maps, after: 400)
        let readLength = first.tip.settledLength
        for _ in 0..<6 { _ = try await post(1, .maps).gzipped() }
        // Readers still sending an older version: all they hold are its segments.
        var identityProbes: [ArraySlice<UInt8>] = []
        var gzipProbes: [ArraySlice<UInt8>] = []
        do {
            let old = try await feeds.read(.maps)
            let oldIdentity = HTTPResponse(status: .ok, body: old.identity.body)
            let oldGzip = HTTPResponse(status: .ok, body: await old.gzipped().body)
            var newest = old
            for _ in 0..<40 {
                newest = try await post(1, .maps)
                _ = await newest.gzipped()
            }
            let sharedIdentity = Set(newest.identity.body.segments.map(address))
            let sharedGzip = Set(await newest.gzipped().body.segments.map(address))
            identityProbes = oldIdentity.body.segments.filter { !sharedIdentity.contains(address($0)) }
            gzipProbes = oldGzip.body.segments.filter { !sharedGzip.contains(address($0)) }
            let alone = identityProbes.map(\.count).reduce(0, +)
            #expect(sharedIdentity.contains(address(oldIdentity.body.segments[0])), "the read is shared")
            #expect(alone > 0 && alone <= old.tip.length - readLength, "at most the rows since the read, its tail, ]")
            #expect(!gzipProbes.isEmpty && gzipProbes.count < oldGzip.body.segments.count)
        }
        // The old version and its responses are gone: nothing but the probes holds the segments they alone had.
        for index in identityProbes.indices { #expect(isSoleOwner(&identityProbes[index]), "identity \(index)") }
        for index in gzipProbes.indices { #expect(isSoleOwner(&gzipProbes[index]), "gzip \(index)") }
    }
}
