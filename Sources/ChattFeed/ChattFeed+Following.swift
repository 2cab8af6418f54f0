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
            // each in memory, not two.
            let kinds = state.withLock { state in
                state.wanted.formUnion(state.feeds.keys)
                state.feeds = [:]
                return state.wanted
            }
            await build(kinds, at: start.position)
        case .advanced(let slice):
            let current = state.withLock { $0.feeds }
            let next = current.compactMapValues { $0.adding(slice) }
            let unplaced = Set(current.keys).subtracting(next.keys)
            state.withLock { state in
                state.feeds = next
                state.wanted.formUnion(unplaced)
            }
            await build(unplaced, at: slice.end)
        case .settled(let position):
            let missing = state.withLock { $0.wanted.subtracting($0.feeds.keys) }
            await build(missing, at: position)
        }
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
                }
                state.wanted.subtract(kinds)
                state.buildFailure = nil
            }
        } catch {
            state.withLock { $0.buildFailure = error }
        }
    }
}
