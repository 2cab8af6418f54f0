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
        try await feeds.answer(kind, before: .untilTheTestFails)
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
        #expect(feeds.counts == (hits: 2, misses: 2), "the first read of the other feed")
    }

    @Test func untrustedNothingIsReadyAndEveryReadWaitsForTheStore() async throws {
        let feeds = feeds()
        _ = try await answer(feeds)
        #expect(feeds.readyAnswer(.maps) { $0 } == nil, "untrusted: every read has the store ticked")
        _ = try await answer(feeds)
        #expect(feeds.counts == (hits: 0, misses: 2))
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

    @Test func aReadThatBeginsAfterAPostsCompletionShowsIt() async throws {
        let feeds = feeds()
        feeds.listening(true)
        _ = try await answer(feeds)
        let added = Promise()
        feeds.add(NewChatt(name: "a", message: "mine")) { outcome in
            #expect((try? outcome.get()) != nil)
            added.fulfil()
        }
        await added.wait()
        #expect(try await answer(feeds).feed.rowCount == 1)
    }
}

/// Fulfilled once; waited for by one caller.
private final class Promise: Sendable {
    private let state = Locked<(done: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func fulfil() {
        let waiter = state.withLock { state in
            state.done = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if !state.done { state.waiter = continuation }
                return state.done
            }
            if done { continuation.resume() }
        }
    }
}
