@testable import ChattFeed
import ChattModel
import TestSupport
import Testing

/// An append builds its versions outside the readers' lock and publishes them only if nothing moved meanwhile.
/// Each test stops between the two halves (`build`, then `publish`) and moves the feed there itself.
@Suite struct FeedPublishTests {
    let repository = InMemoryChattRepository()
    let feeds: ChattFeed

    init() async throws {
        feeds = ChattFeed(repository: repository)
        feeds.listening(true)
        for serial in 1...20 { try await repository.add(variedChatt(serial)) }
        _ = try await feeds.read(.maps)
        _ = try await feeds.read(.chatts)
    }

    @Test func versionsBuiltOnTheCurrentOnesArePublishedWhenNothingMoved() async throws {
        let before = try #require(feeds.currentFeed(.maps))
        let versions = feeds.build(try await repository.add(variedChatt(21)))
        #expect(feeds.currentFeed(.maps) === before, "readers see the version before until it is published")
        #expect(feeds.publish(versions))
        for kind in ChattFeed.Kind.allCases {
            let current = try #require(feeds.currentFeed(kind))
            #expect(current === versions.built[kind])
            try await expectSameAsRebuilt(current, kind, repository)
        }
        #expect(repository.snapshotReads == 2 + 2 && repository.deltaReads == 0, "two reads, then only references")
    }

    @Test func aVersionIsNotPublishedOverANewerOne() async throws {
        let versions = feeds.build(try await repository.add(variedChatt(21)))
        // Meanwhile an operator's edit is announced, and a read publishes a newer feed, from a full read.
        feeds.invalidate()
        let newer = try await feeds.read(.maps)
        #expect(!feeds.publish(versions))
        let stored = feeds.state.withLock { $0.feeds[.maps] }
        #expect(stored === newer, "the newer feed stays")
        #expect(feeds.currentFeed(.maps) == nil, "and the publication's generation leaves it to be caught up")
        try await expectSameAsRebuilt(try await feeds.read(.maps), .maps, repository)
    }

    @Test func aVersionThatMissedAChangeIsKeptOnlyToCatchUpFrom() async throws {
        let versions = feeds.build(try await repository.add(variedChatt(21)))
        // Meanwhile another writer's insert is announced: the version built lacks its row.
        repository.storeCommitted(variedChatt(99), timestamp: "2026-03-25T08:11:59.100030Z")
        feeds.chattsAdded()
        #expect(!feeds.publish(versions))
        #expect(feeds.currentFeed(.maps) == nil, "not current: served, it would hide the insert")
        let kept = try #require(feeds.state.withLock { $0.feeds[.maps] })
        #expect(kept.rowCount == 21, "the newest version of its lineage, holding the post")
        let caughtUp = try await feeds.read(.maps)
        #expect(repository.deltaReads == 1 && repository.snapshotReads == 2, "caught up, not read in full")
        try await expectSameAsRebuilt(caughtUp, .maps, repository)
    }

    @Test func aFeedReadAfterTheBuildBeganIsNotReplaced() async throws {
        // The chatts feed is dropped (its read failed, say), and read again while the post's versions are built.
        feeds.state.withLock { $0.feeds[.chatts] = nil }
        let versions = feeds.build(try await repository.add(variedChatt(21)))
        #expect(versions.built[.chatts] == nil, "nothing current to build on")
        let read = try await feeds.read(.chatts)
        #expect(feeds.publish(versions), "the maps feed did not move")
        #expect(feeds.currentFeed(.maps) === versions.built[.maps])
        let stored = feeds.state.withLock { $0.feeds[.chatts] }
        #expect(stored === read)
        try await expectSameAsRebuilt(try await feeds.read(.chatts), .chatts, repository)
    }

    @Test func publishingIsAPureStepOnTheState() async throws {
        let current = try #require(feeds.currentFeed(.maps))
        let next = try #require(current.adding(try await repository.add(variedChatt(21)), generation: 8))
        let versions = AppendedVersions(generation: 7, base: [.maps: current], built: [.maps: next])
        var state = ChattFeed.State()
        state.trusted = true
        state.generation = 7
        state.feeds[.maps] = current
        var moved = state
        let published = state.publish(versions)
        #expect(published)
        #expect(state.generation == 8 && state.currentFeed(.maps) === next)
        moved.generation = 9
        let publishedMoved = moved.publish(versions)
        #expect(!publishedMoved)
        #expect(moved.generation == 10 && moved.currentFeed(.maps) == nil)
        #expect(moved.feeds[.maps]?.generation == 7 && moved.feeds[.maps]?.rowCount == 21)
    }
}
