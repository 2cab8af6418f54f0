@testable import ChattFeed
import ChattModel
import TestSupport
import Testing

/// A removal deflates again only the gzip pieces it changed: the others are carried from the lineage before it,
/// and the bytes are still a full read's.
@Suite struct FeedGzipPieceTests {
    let repository = InMemoryChattRepository()
    let feeds: ChattFeed

    init() {
        feeds = ChattFeed(repository: repository)
        feeds.listening(true)
    }

    /// Which row to remove, by where it stands among the first pieces.
    enum Target: CaseIterable, Sendable {
        case insideTheSecondPiece, endingTheFirstPiece, theFirstRow
    }

    /// A feed of 20 000 rows (about 20 pieces: fewer than 3 is a chance of about 1 in 10^6), read and gzipped.
    private func gzippedFeed() async throws -> (rows: [(end: Int, endsPiece: Bool)], ids: [String]) {
        for serial in 1...20_000 { try await repository.add(variedChatt(serial)) }
        let feed = try await feeds.read(.maps)
        _ = await feed.gzipped()
        let rows = feedRows(feed.identity.body.bytes)
        try #require(rows.filter { $0.endsPiece }.count >= 3)
        return (rows, repository.chatts.map(\.id))
    }

    /// The bytes a version's lineage deflated itself, and what it should have: `pieces` of its own (by index among
    /// its piece ends) and its open piece, the settled bytes after the last end.
    private func deflated(_ feed: EncodedFeed, pieces: [Int]) -> (done: Int, expected: Int) {
        let ends = feedPieceEnds(feed.identity.body.bytes).filter { $0 <= feed.tip.settledLength }
        let lengths = pieces.map { $0 == 0 ? ends[0] : ends[$0] - ends[$0 - 1] }
        let open = feed.tip.settledLength - (ends.last ?? 0)
        return (feed.lineage.compressed.deflatedBytes(), lengths.reduce(open, +))
    }

    private func remove(_ id: String) async throws -> EncodedFeed {
        #expect(repository.remove(id: id))
        try await feeds.log.noticedAndRead()
        return try await feeds.read(.maps)
    }

    @Test(arguments: Target.allCases)
    func aRemovalDeflatesAgainOnlyThePieceItChanged(_ target: Target) async throws {
        let (rows, ids) = try await gzippedFeed()
        let firstEnd = try #require(rows.firstIndex { $0.endsPiece })
        let row: Int
        switch target {
        case .insideTheSecondPiece:
            row = try #require((firstEnd + 1..<rows.count).first { !rows[$0].endsPiece })
        case .endingTheFirstPiece:
            row = firstEnd
        case .theFirstRow:
            try #require(firstEnd > 0)
            row = 0
        }
        let feed = try await remove(ids[row])
        try await expectSameAsRebuilt(feed, .maps, repository)
        // Inside the second piece: that piece again. Ending the first: the first two, now one. The first row: the
        // first piece, which starts the feed and loses a row.
        let (done, expected) = deflated(feed, pieces: [target == .insideTheSecondPiece ? 1 : 0])
        #expect(done == expected)
        #expect(done < feed.identity.body.count / 4)
    }

    @Test func piecesCarriedIntoALineageNobodyGzippedAreCarriedOnByTheNext() async throws {
        let (rows, ids) = try await gzippedFeed()
        let ends = rows.indices.filter { rows[$0].endsPiece }
        let inSecond = try #require((ends[0] + 1..<ends[1]).first { !rows[$0].endsPiece })
        let inThird = try #require((ends[1] + 1..<ends[2]).first { !rows[$0].endsPiece })
        _ = try await remove(ids[inSecond])
        let feed = try await remove(ids[inThird])
        try await expectSameAsRebuilt(feed, .maps, repository)
        let (done, expected) = deflated(feed, pieces: [1, 2])
        #expect(done == expected)
    }

    /// A lineage made by a removal shares its predecessor's bytes, one more segment each time, until a copy puts
    /// them together (`FeedLineage.mostSegments`): past that, with posts between, every version is still a full
    /// read's in both forms.
    @Test func removalsOneByOnePastTheSegmentLimitKeepEveryVersionAFullReads() async throws {
        for serial in 1...3_000 { try await repository.add(variedChatt(serial)) }
        _ = await (try await feeds.read(.maps)).gzipped()
        var generator = SystemRandomNumberGenerator()
        var mostSegments = 0
        for round in 0..<(FeedLineage.mostSegments + 10) {
            let ids = repository.chatts.map(\.id)
            var feed = try await remove(ids[Int.random(in: 0..<ids.count, using: &generator)])
            mostSegments = max(mostSegments, feed.tip.settled.segments.count)
            if round % 8 == 0 {
                try await repository.add(variedChatt(10_000 + round))
                try await feeds.log.noticedAndRead()
                feed = try await feeds.read(.maps)
            }
            if round % 16 == 0 || round >= FeedLineage.mostSegments - 2 {
                try await expectSameAsRebuilt(feed, .maps, repository)
            }
        }
        #expect(mostSegments > 8, "removals share their bytes rather than copy them")
        #expect(mostSegments <= FeedLineage.mostSegments + 1)
    }
}
