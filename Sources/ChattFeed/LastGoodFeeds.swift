import Locking

/// The last whole feed of each kind that was known current, and when: while the database cannot be reached, it is
/// served for up to `maxAge` after that instead of a 503, with `Age` saying how old it is (the `stale-if-error`
/// idea of RFC 5861, with the server as the cache). Off (`maxAge` zero) unless the operator asks, since docs/API.md
/// answers an unreachable database with 503.
final class LastGoodFeeds: Sendable {
    private struct Entry {
        let feed: EncodedFeed
        let confirmedAt: ContinuousClock.Instant
    }

    /// The longest a feed may be served after it was last known current; zero serves none.
    let maxAge: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let entries = Locked<[ChattFeed.Kind: Entry]>([:])

    init(maxAge: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.maxAge = maxAge
        self.now = now
    }

    /// `feed` is current now: a feed that trusts notifications, or the database itself, says so.
    func confirm(_ feed: EncodedFeed, _ kind: ChattFeed.Kind) {
        guard maxAge > .zero else { return }
        let time = now()
        entries.withLock { $0[kind] = Entry(feed: feed, confirmedAt: time) }
    }

    /// The last feed of `kind` known current and its age in whole seconds, if that is within `maxAge`.
    func fallback(_ kind: ChattFeed.Kind) -> (feed: EncodedFeed, age: Int)? {
        guard maxAge > .zero, let entry = entries.withLock({ $0[kind] }) else { return nil }
        let age = max(.zero, entry.confirmedAt.duration(to: now()))
        return age <= maxAge ? (entry.feed, Int(age.components.seconds)) : nil
    }
}
