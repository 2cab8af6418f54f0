import ChangeLog
import ChattModel

/// How the feeds follow the change log: a stretch of it is appended to each version (built outside the readers'
/// lock, published under it), a chatt that cannot be placed or a new start reads the store in full at the log's
/// position, and the end of each flight builds the kinds readers asked for. The log does not move while a full
/// read runs (it waits for `follow` to return), so every version shows exactly the chatts of its position.
extension ChattFeed {
    public func follow(_ change: LogChange) async {
        switch change {
        case .restarted(let start):
            // Nothing held is any good now; letting the old bodies go before the new ones are read keeps one of
            // each in memory, not two. A kind read since it was published is read again at once; one nobody read
            // (a process nobody uses) waits for its next reader.
            let kinds = state.withLock { state in
                state.wanted.formUnion(Set(state.feeds.keys).subtracting(state.unread))
                state.feeds = [:]
                state.unread = []
                state.forgetDeferred()
                return state.wanted
            }
            await build(kinds, at: start.position)
        case .advanced(let slice):
            guard !state.withLock({ $0.deferIfUnread(slice, limit: deferredChattsLimit) }) else { return }
            await append(slice)
        case .settled(let position):
            // A reader waits for what was kept: it is appended first.
            if state.withLock({ !$0.wanted.isEmpty && !$0.deferred.isEmpty }) { await append(nil) }
            let missing = state.withLock { $0.wanted.subtracting($0.feeds.keys) }
            await build(missing, at: position)
        }
    }

    /// Appends the stretches kept, then `slice`, to every version held; a kind they cannot be placed in is read in
    /// full at their end.
    private func append(_ slice: LogSlice?) async {
        let (current, slices) = state.withLock { state in
            defer { state.forgetDeferred() }
            return (state.feeds, state.deferred + (slice.map { [$0] } ?? []))
        }
        guard let end = slices.last?.end else { return }
        let next = current.compactMapValues { feed in slices.reduce(Optional(feed)) { $0?.adding($1) } }
        let unplaced = Set(current.keys).subtracting(next.keys)
        state.withLock { state in
            state.feeds = next
            state.unread.formUnion(next.keys)
            state.wanted.formUnion(unplaced)
        }
        await build(unplaced, at: end)
    }

    /// Reads the store in full at `position`, once for every kind in `kinds`, and publishes their versions; a
    /// failure is kept for the readers that wait for them, who answer it.
    private func build(_ kinds: Set<Kind>, at position: LogPosition) async {
        guard !kinds.isEmpty else { return }
        defer { fullReadEnded() }
        state.withLock { $0.fullReads += 1 }
        let hints = state.withLock { $0.sizeHints }
        // Some slack over the last size, so that growth rarely copies the body being built.
        var builders = kinds.map { kind in
            let hint = hints[kind] ?? 0
            return FeedLineageBuilder(kind: kind, capacity: hint + hint / 16)
        }
        do throws(RepositoryError) {
            let found = try await repository.readChatts(at: position, before: .now + patience) { row in
                for index in builders.indices { builders[index].append(row) }
            }
            guard found else {
                // The store lost the log's tick (a restore, a failover): the log starts over at its next flight.
                log.noticed()
                throw RepositoryError.unavailable("feed read: the store no longer has the log's tick")
            }
            let built = builders.map { EncodedFeed($0, at: position) }
            state.withLock { state in
                for feed in built {
                    state.feeds[feed.kind] = feed
                    state.sizeHints[feed.kind] = feed.identity.body.count
                    state.unread.insert(feed.kind)
                }
                state.buildFailure = nil
            }
        } catch {
            state.withLock { $0.buildFailure = error }
        }
    }
}

extension ChattFeed.State {
    /// Keeps `slice` for the next read instead of appending it, when no reader took the versions published and none
    /// waits: true if kept. Past `limit` chatts kept, the versions go instead, and the next read reads in full.
    mutating func deferIfUnread(_ slice: LogSlice, limit: Int) -> Bool {
        guard !feeds.isEmpty, wanted.isEmpty, unread.isSuperset(of: feeds.keys) else { return false }
        let chatts = slice.ticks.eventCount
        guard deferredChatts + chatts <= limit else {
            feeds = [:]
            unread = []
            forgetDeferred()
            return true
        }
        deferred.append(slice)
        deferredChatts += chatts
        return true
    }

    mutating func forgetDeferred() {
        deferred = []
        deferredChatts = 0
    }

    /// The published version of `kind`, taken by a reader, when it is current with the log (nothing kept for it);
    /// the kind is no longer wanted then.
    mutating func take(_ kind: ChattFeed.Kind) -> EncodedFeed? {
        guard deferred.isEmpty, let feed = feeds[kind] else { return nil }
        unread.remove(kind)
        wanted.remove(kind)
        return feed
    }
}
