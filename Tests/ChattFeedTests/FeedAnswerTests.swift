@testable import ChattFeed
import ChattModel
import Locking
import TestSupport
import Testing

/// What a reader is answered with: hits and misses counted by the feed itself, and a stale feed marked as such.
@Suite struct FeedAnswerTests {
    let repository = InMemoryChattRepository()
    let clock = Locked(ContinuousClock.now)

    func feeds(staleIfError: Duration = .zero, strict: Bool = false) -> ChattFeed {
        ChattFeed(repository: repository, strict: strict, staleIfError: staleIfError, now: { [clock] in
            clock.withLock { $0 }
        })
    }

    func answer(_ feeds: ChattFeed, _ kind: ChattFeed.Kind = .maps) async throws(RepositoryError) -> FeedAnswer {
        try await feeds.answer(kind, before: .now + .seconds(60))
    }

    @Test func everyAnswerCountsOnceAsAHitOrAMiss() async throws {
        let feeds = feeds()
        feeds.listening(true)
        #expect(feeds.readyAnswer(.maps) { $0 } == nil, "nothing read yet")
        _ = try await answer(feeds)
        #expect(feeds.counts == (hits: 0, misses: 1))
        #expect(feeds.readyAnswer(.maps) { _ in nil as Int? } == nil, "passed on: the caller asks again")
        #expect(feeds.counts == (hits: 0, misses: 1), "a read the ready path could not answer is not counted there")
        #expect(feeds.readyAnswer(.maps) { $0.rowCount } == 0)
        #expect(feeds.counts == (hits: 1, misses: 1))
        _ = try await answer(feeds)
        #expect(feeds.counts == (hits: 2, misses: 1))
        _ = try await answer(feeds, .chatts)
        feeds.invalidate()
        _ = try await answer(feeds)
        #expect(feeds.counts == (hits: 2, misses: 3))
    }

    @Test func untrustedNothingIsReadyAndEachCurrentReadIsAHit() async throws {
        let feeds = feeds()
        _ = try await answer(feeds)
        #expect(feeds.readyAnswer(.maps) { $0 } == nil, "untrusted: every read checks the version")
        _ = try await answer(feeds)
        #expect(feeds.counts == (hits: 1, misses: 1))
    }

    @Test func aStaleAnswerIsMarkedWithItsAgeAndTheFailure() async throws {
        try await repository.add(NewChatt(name: "a", message: "m"))
        let feeds = feeds(staleIfError: .seconds(30))
        let current = try await answer(feeds)
        #expect(current.stale == nil)
        repository.fail(with: .failed("relation \"chatts\" does not exist"))
        clock.withLock { $0 += .milliseconds(2_500) }
        let stale = try await answer(feeds)
        #expect(stale.feed === current.feed)
        #expect(stale.stale == StaleFeed(age: 2, failure: .failed("relation \"chatts\" does not exist")))
        await #expect(throws: RepositoryError.failed("relation \"chatts\" does not exist")) {
            try await answer(feeds, .chatts)
        }
    }

    @Test func noStaleAnswerWhenStrictOrForARefusedValue() async throws {
        for (feeds, failure) in [
            (feeds(staleIfError: .seconds(30), strict: true), RepositoryError.unavailable("down")),
            (feeds(staleIfError: .seconds(30)), .rejected("invalid byte sequence")),
        ] {
            repository.fail(with: nil)
            _ = try await answer(feeds)
            repository.fail(with: failure)
            await #expect(throws: failure) { try await answer(feeds) }
        }
    }

    @Test func aPostIsTakenInBeforeItsCompletionAndAFailedOneIsCaughtUp() async throws {
        let feeds = feeds()
        feeds.listening(true)
        _ = try await answer(feeds)
        let added = Locked<Result<Void, RepositoryError>?>(nil)
        feeds.add(NewChatt(name: "a", message: "mine")) { outcome in
            added.withLock { $0 = outcome }
            #expect(feeds.currentFeed(.maps)?.rowCount == 1, "in the feed before the poster hears")
        }
        #expect((try added.withLock { $0 }?.get()) != nil)
        // A lost connection: the outcome is unknown, and the chatt may be stored.
        let generation = feeds.generation
        feeds.take(.failure(.unavailable("connection lost")))
        #expect(feeds.generation > generation && feeds.currentFeed(.maps) == nil)
    }
}
