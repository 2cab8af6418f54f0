import ChattModel

extension ChattFeed {
    /// The answer to a reader whose deadline passed while it waited for another's read of the store.
    static let outOfTime = RepositoryError.unavailable("feed read: no answer from the store in time")

    /// What `make` answers from the current feed of `kind`, when that feed may be served with no database access
    /// and `make` needs nothing more (nil: ask `answer`). Counted as a hit only when answered here, so a read
    /// passed on to `answer` counts once. Never waits but for a moment's lock, so an I/O queue may call it.
    public func readyAnswer<Answer>(_ kind: Kind, _ make: (EncodedFeed) -> Answer?) -> Answer? {
        guard let feed = currentFeed(kind), let answer = make(feed) else { return nil }
        state.withLock { $0.hits += 1 }
        lastGood.confirm(feed, kind)
        return answer
    }

    /// A feed at least as new as the store was when this call began, re-read if needed. Should the store fail
    /// to answer, the last good feed while it is recent enough (see `init`), marked stale. Suspends while the
    /// store is read, by this caller or by another one it waits for, and gives up at `deadline` (`.unavailable`).
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

    /// A feed at least as new as the store was when this call began, re-read if needed; the store's failure
    /// when it cannot be read.
    func read(_ kind: Kind, before deadline: ContinuousClock.Instant) async throws(RepositoryError) -> EncodedFeed {
        let (arrival, trusted) = state.withLock { ($0.generation, $0.trusted) }
        var generation = arrival
        var version: ChattsVersion?
        if !trusted {
            let seen = try await repository.version(before: deadline)
            version = seen
            generation = state.withLock { state in
                if state.lastSeenVersion != seen {
                    // An unannounced change: it may be an edit or a removal as well as rows added.
                    state.lastSeenVersion = seen
                    state.generation += 1
                    state.editGeneration = state.generation
                }
                return state.generation
            }
        }
        while true {
            switch state.withLock({ $0.nextStep(kind, generation: generation, version: version) }) {
            case .serve(let feed): return feed
            case .join(let rebuild): return try await rebuild.outcome(before: deadline).get()
            case .awaitOlder(let rebuild):
                // Whatever the older read gave, the next step decides again; past the deadline there is none.
                _ = await rebuild.outcome(before: deadline)
                guard ContinuousClock.now < deadline else { throw Self.outOfTime }
            case .lead(let rebuild, let stale, let sizeHint):
                return try await lead(rebuild, kind, stale: stale, sizeHint: sizeHint, before: deadline)
            }
        }
    }

    /// Reads the store for `rebuild`, then publishes the result unless a newer feed was published meanwhile.
    private func lead(
        _ rebuild: FeedRebuild, _ kind: Kind, stale: EncodedFeed?, sizeHint: Int,
        before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> EncodedFeed {
        let result: Result<EncodedFeed, RepositoryError>
        do {
            result = .success(try await readStore(
                kind, stale: stale, sizeHint: sizeHint, generation: rebuild.generation, before: deadline))
        } catch {
            result = .failure(error)
        }
        state.withLock { state in
            if case .success(let feed) = result {
                state.countedReads += 1
                if (state.feeds[kind]?.generation ?? 0) <= feed.generation { state.feeds[kind] = feed }
            }
            state.rebuilds[kind] = nil
        }
        rebuild.finish(result)
        return try result.get()
    }

    /// Catches `stale` up with the rows after its settled ones when it can, else reads everything.
    ///
    /// More than `catchUpLimit` new rows (another writer's bulk insert) are read again in full instead, through
    /// the store's cursor: a catch-up holds its rows, as stored and as read, all at once beside the feed.
    private func readStore(
        _ kind: Kind, stale: EncodedFeed?, sizeHint: Int, generation: UInt64,
        before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> EncodedFeed {
        var sizeHint = sizeHint
        if let stale {
            let limit = catchUpLimit + 1
            let delta = try await repository.chatts(after: stale.tip.boundary, limit: limit, before: deadline)
            if delta.chatts.count < limit {
                if let caughtUp = stale.caughtUp(with: delta, generation: generation) { return caughtUp }
                // A post's append moves the lineage on before it publishes, so `stale` may no longer be its newest
                // version: catch up from the one the append left (published, or kept for this), once it is done.
                if let newest = newestVersion(of: stale, kind),
                    let caughtUp = newest.caughtUp(with: delta, generation: generation)
                {
                    return caughtUp
                }
            }
            // Too many to catch up with, or not the whole store (a removal, or a row placed among the settled
            // ones): read it all.
            sizeHint = stale.tip.length
            state.withLock { state in
                if state.feeds[kind] === stale { state.feeds[kind] = nil }
            }
        }
        // Some slack over the last size, so that growth rarely copies the body being built.
        var builder = FeedLineageBuilder(kind: kind, keepsTail: true, capacity: sizeHint + sizeHint / 16)
        let version = try await repository.readChatts(before: deadline) { builder.append($0) }
        defer { fullReadEnded() }
        return EncodedFeed(builder, version: version, generation: generation)
    }
}

extension ChattFeed {
    /// The version of `feed`'s lineage current now, if an append has made one since `feed`; waits for an append
    /// in progress (it builds in moments).
    fileprivate func newestVersion(of feed: EncodedFeed, _ kind: Kind) -> EncodedFeed? {
        appends.withLock { _ in }
        guard let current = state.withLock({ $0.feeds[kind] }), current !== feed, current.lineage === feed.lineage
        else { return nil }
        return current
    }
}

/// What a reader does next, decided under the lock.
enum ReadStep {
    case serve(EncodedFeed)
    case join(FeedRebuild)
    case awaitOlder(FeedRebuild)
    /// Read the store for `rebuild`: only the rows after those of `stale` when given, else everything.
    case lead(FeedRebuild, stale: EncodedFeed?, sizeHint: Int)
}

extension ChattFeed.State {
    /// Serve a feed fresh enough for a reader that arrived at `generation` (and saw `version`, if untrusted);
    /// else join a rebuild begun at or after that generation, wait out an older one, or lead a new one.
    mutating func nextStep(_ kind: ChattFeed.Kind, generation: UInt64, version: ChattsVersion?) -> ReadStep {
        if let feed = feeds[kind], feed.generation >= generation || (version != nil && feed.version == version) {
            hits += 1
            return .serve(feed)
        }
        if let rebuild = rebuilds[kind] {
            return rebuild.generation >= generation ? .join(rebuild) : .awaitOlder(rebuild)
        }
        // Tagged with the generation now, before the query starts: anything invalidated later makes it stale.
        let rebuild = FeedRebuild(generation: self.generation)
        rebuilds[kind] = rebuild
        misses += 1
        let stale = feeds[kind]
        if let stale, stale.generation >= editGeneration {
            return .lead(rebuild, stale: stale, sizeHint: 0)
        }
        // A full read replaces the stale feed, which nobody arriving from now on can be served: let it go now
        // rather than hold two bodies while the new one is built.
        feeds[kind] = nil
        return .lead(rebuild, stale: nil, sizeHint: stale?.tip.length ?? 0)
    }
}
