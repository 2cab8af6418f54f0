import ChattModel

extension ChattFeed {
    /// What `make` answers from the published feed of `kind`, when that feed may be served with no database
    /// access (trusted, and the log has told the feed everything asked of it) and `make` needs nothing more (nil:
    /// ask `answer`). Counted as a hit only when answered here, so a read passed on to `answer` counts once. Never
    /// waits but for a moment's lock, so an I/O queue may call it.
    public func readyAnswer<Answer>(_ kind: Kind, _ make: (EncodedFeed) -> Answer?) -> Answer? {
        guard log.isCaughtUp, let feed = state.withLock({ $0.trusted ? $0.take(kind) : nil }),
            let answer = make(feed)
        else { return nil }
        state.withLock { $0.hits += 1 }
        lastGood.confirm(feed, kind)
        return answer
    }

    /// A feed that shows everything the store held when this call began (everything this process committed, when
    /// trusted), read if needed. Should the store fail to answer, the last good feed while it is recent enough (see
    /// `init`), marked stale. Suspends while the store is read and gives up at `deadline` (`.unavailable`).
    public func answer(
        _ kind: Kind, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> FeedAnswer {
        do throws(RepositoryError) {
            let feed = try await read(kind, before: deadline)
            lastGood.confirm(feed, kind)
            return FeedAnswer(feed: feed, stale: nil)
        } catch {
            // A value the store refused is the request's fault, not an outage (and feed reads send none).
            if case .rejected = error { throw error }
            guard let (feed, age) = lastGood.fallback(kind) else { throw error }
            return FeedAnswer(feed: feed, stale: StaleFeed(age: age, failure: error))
        }
    }

    /// The feed of `kind` once the log has caught up with what this read must see; a kind not built yet is built
    /// by the log's next flight.
    func read(_ kind: Kind, before deadline: ContinuousClock.Instant) async throws(RepositoryError) -> EncodedFeed {
        let trusted = state.withLock { $0.trusted }
        if trusted, log.isCaughtUp, let feed = state.withLock({ $0.take(kind) }) {
            state.withLock { $0.hits += 1 }
            return feed
        }
        state.withLock { $0.misses += 1 }
        if trusted {
            _ = try await log.caughtUp(before: deadline)
        } else {
            _ = try await log.synced(before: deadline)
        }
        if let feed = state.withLock({ $0.take(kind) }) { return feed }
        // Not built, or behind by what was kept while nobody read: the end of the log's next flight sees to it.
        state.withLock { _ = $0.wanted.insert(kind) }
        _ = try await log.synced(before: deadline)
        return try state.withLock { state throws(RepositoryError) in
            guard let feed = state.take(kind) else {
                throw state.buildFailure ?? RepositoryError.unavailable("feed: not read from the store yet")
            }
            return feed
        }
    }
}
