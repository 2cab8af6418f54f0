import ChattFeed
import Locking

/// The last whole feed of each kind that was known current, and when: while the database cannot be reached, it is
/// served for up to `maxAge` seconds after that instead of a 503, with `Age` saying how old it is (the
/// `stale-if-error` idea of RFC 5861, with the server as the cache). Off (`maxAge` 0) unless the operator asks, since
/// docs/API.md answers an unreachable database with 503.
final class LastGoodFeeds: Sendable {
    private struct Entry {
        let feed: EncodedFeed
        let confirmedAt: Double
    }

    /// The most seconds a feed may be served after it was last known current; 0 serves none.
    let maxAge: Double
    private let now: @Sendable () -> Double
    private let entries = Locked<[ChattFeedCache.Kind: Entry]>([:])

    /// - Parameter now: a monotonic clock in seconds (injected by tests).
    init(maxAge: Double, now: @escaping @Sendable () -> Double = PostRateLimiter.monotonicSeconds) {
        self.maxAge = maxAge
        self.now = now
    }

    /// `feed` is current now: a cache that trusts notifications, or the database itself, says so.
    func confirm(_ feed: EncodedFeed, _ kind: ChattFeedCache.Kind) {
        guard maxAge > 0 else { return }
        let time = now()
        entries.withLock { $0[kind] = Entry(feed: feed, confirmedAt: time) }
    }

    /// The last feed of `kind` known current and its age in whole seconds, if that is within `maxAge`.
    func fallback(_ kind: ChattFeedCache.Kind) -> (feed: EncodedFeed, age: Int)? {
        guard maxAge > 0, let entry = entries.withLock({ $0[kind] }) else { return nil }
        let age = max(0, now() - entry.confirmedAt)
        return age <= maxAge ? (entry.feed, Int(age)) : nil
    }
}
