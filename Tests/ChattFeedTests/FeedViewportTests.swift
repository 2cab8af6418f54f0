@testable import ChattFeed
import ChattModel
import TestSupport
import Testing
import Viewport

/// `rows(in:)` of a maps feed, through every way its rows change: a full read, posts that settle rows into packed
/// runs, posts still in the tail, and removals that start a new lineage.
@Suite struct FeedViewportTests {
    let repository = InMemoryChattRepository()
    let feeds: ChattFeed

    init() {
        feeds = ChattFeed(repository: repository)
        feeds.listening(true)
    }

    /// Points on a small grid of whole degrees (so that box edges fall on them), some with no location or a
    /// geodata no box holds.
    static func chatt(_ serial: Int) -> NewChatt {
        let geodata: String? =
            switch serial % 9 {
            case 0: nil
            case 1: "not a location"
            default: "[\(serial % 7 - 3), \(serial % 11 - 5),\"North\",\"walking\"]"
            }
        return NewChatt(name: "n\(serial % 5)", message: serial % 4 == 0 ? "quote \" \(serial)" : "m", geodata: geodata)
    }

    static let boxes = [
        BoundingBox(west: -180, south: -90, east: 180, north: 90)!,
        BoundingBox(west: -2, south: -1, east: 2, north: 1)!,
        BoundingBox(west: 3, south: 0, east: 3, north: 0)!,
        BoundingBox(west: 4, south: -3, east: -4, north: 3)!,  // across the antimeridian
        BoundingBox(west: 10, south: 10, east: 20, north: 20)!,
    ]

    /// Every box, limit and direction against looking at every stored chatt.
    func expectBoxesMatch(_ feed: EncodedFeed, sourceLocation: SourceLocation = #_sourceLocation) {
        let chatts = repository.chatts
        #expect(feed.rowCount == chatts.count, sourceLocation: sourceLocation)
        for box in Self.boxes {
            for from in [0, chatts.count / 3, chatts.count - 5] {
                let inside = (from..<chatts.count).filter { row in
                    chatts[row].geodata.flatMap(MapPoint.init(geodata:)).map(box.contains) ?? false
                }
                for (limit, newest) in [(Int.max, false), (3, false), (500, false), (3, true), (500, true)] {
                    let expected = newest ? Array(inside.suffix(limit)) : Array(inside.prefix(limit))
                    let rows = feed.rows(in: box, from: from, limit: limit, newest: newest)
                    #expect(rows == expected, "\(box) from \(from) limit \(limit)", sourceLocation: sourceLocation)
                    #expect(
                        feed.body(ofRows: rows).bytes == ChattRowEncoder.mapsRows(expected.map { chatts[$0] }),
                        sourceLocation: sourceLocation)
                }
            }
        }
    }

    @Test func answersWhatEveryRowLookedAtAnswersAsTheFeedChanges() async throws {
        for serial in 0..<1500 { try await repository.add(Self.chatt(serial)) }
        expectBoxesMatch(try await feeds.read(.maps))
        // Posts settle rows past a run's worth, so runs are packed after the full read's, and merged.
        for serial in 1500..<2700 {
            try await repository.add(Self.chatt(serial))
            if serial % 400 == 0 { expectBoxesMatch(try await feeds.read(.maps)) }
        }
        expectBoxesMatch(try await feeds.read(.maps))
        // Removals of a settled row, a packed one and a tail row start a new lineage, its index made again.
        let ids = repository.chatts.map(\.id)
        for id in [ids[2], ids[1800], ids[ids.count - 2]] { #expect(repository.remove(id: id)) }
        try await feeds.log.noticedAndRead()
        expectBoxesMatch(try await feeds.read(.maps))
        for serial in 2700..<2720 { try await repository.add(Self.chatt(serial)) }
        expectBoxesMatch(try await feeds.read(.maps))
    }
}
