import ChattModel
import JSON
import Locking

/// The encoded `/getmaps` and `/getchatts` feeds, shared by every request until the store may have changed.
///
/// A generation counter orders events: `invalidate()` bumps it, and every encoded feed is tagged with the
/// generation read *before* its snapshot query began, so an invalidation during the query leaves the result
/// stale at once. A request that sees generation `g` when it arrives is served a feed tagged `g` or later:
/// one whose query began after everything acknowledged before the request (a post invalidates before its
/// 200, so a client always reads its own writes).
///
/// While change notifications are trusted, a feed tagged with the current generation is served with no
/// database access at all. Otherwise every read first asks `repository.version()`, and a feed read at that
/// version is current; a version not seen before bumps the generation, so the tagging above covers it too.
///
/// When many requests find a feed stale together, one runs the snapshot query (single flight); the others
/// wait for it if it began at or after their generation, else for it to end and then for the next one.
public final class ChattFeedCache: Sendable {
    /// Which feed: `/getmaps` rows (with geodata) or `/getchatts` rows (without).
    public enum Kind: Sendable, Hashable {
        case maps, chatts
    }

    fileprivate struct State {
        var generation: UInt64 = 0
        var trusted = false
        /// The last store version a read saw while untrusted.
        var lastSeenVersion: ChattsVersion?
        var feeds: [Kind: EncodedFeed] = [:]
        var rebuilds: [Kind: FeedRebuild] = [:]
        /// Reads served from a stored feed, and reads that ran a snapshot query, for /metrics.
        var hits = 0
        var misses = 0
    }

    /// What a reader does next, decided under the lock.
    fileprivate enum Step {
        case serve(EncodedFeed)
        case join(FeedRebuild)
        case awaitOlder(FeedRebuild)
        case lead(FeedRebuild)
    }

    private let state = Locked(State())

    /// An empty cache that does not trust notifications.
    public init() {}

    /// Something may have changed in the store: reads from now on get a feed whose query begins later.
    public func invalidate() {
        state.withLock { $0.generation += 1 }
    }

    /// While true, a current feed is served without asking the database; call it with true only while
    /// every change to the store is followed by `invalidate()` (a `LISTEN` that is known to be listening).
    /// Any change of trust also invalidates: notifications may have been missed while not listening.
    public func setNotificationsTrusted(_ trusted: Bool) {
        state.withLock { state in
            guard state.trusted != trusted else { return }
            state.trusted = trusted
            state.generation += 1
        }
    }

    /// Reads served from a stored feed and reads that queried the store, since start.
    public var counts: (hits: Int, misses: Int) {
        state.withLock { ($0.hits, $0.misses) }
    }

    /// The current generation; every `invalidate()` increases it.
    public var generation: UInt64 {
        state.withLock { $0.generation }
    }

    /// The feed when it can be served with no database access (trusted, and nothing invalidated it), else
    /// nil. Never blocks on anything but a short lock, so an I/O queue may call it.
    public func currentFeed(_ kind: Kind) -> EncodedFeed? {
        state.withLock { state in
            guard state.trusted, let feed = state.feeds[kind], feed.generation == state.generation else { return nil }
            return feed
        }
    }

    /// Counts a read answered from `currentFeed` (the caller knows whether it could answer from it: a
    /// gzip form not made yet sends the request on to `feed`, which counts it then).
    public func countImmediateHit() {
        state.withLock { $0.hits += 1 }
    }

    /// A feed at least as new as the store was when this call began, re-read if needed. Blocks.
    public func feed(_ kind: Kind, from repository: any ChattRepository) throws(RepositoryError) -> EncodedFeed {
        let (arrival, trusted) = state.withLock { ($0.generation, $0.trusted) }
        var generation = arrival
        var version: ChattsVersion?
        if !trusted {
            let seen = try repository.version()
            version = seen
            generation = state.withLock { state in
                if state.lastSeenVersion != seen {
                    state.lastSeenVersion = seen
                    state.generation += 1
                }
                return state.generation
            }
        }
        while true {
            switch state.withLock({ $0.nextStep(kind, generation: generation, version: version) }) {
            case .serve(let feed): return feed
            case .join(let rebuild): return try rebuild.wait().get()
            case .awaitOlder(let rebuild): _ = rebuild.wait()
            case .lead(let rebuild): return try lead(rebuild, kind, repository)
            }
        }
    }

    /// Runs the snapshot query for `rebuild`, stores and publishes the result.
    private func lead(
        _ rebuild: FeedRebuild, _ kind: Kind, _ repository: any ChattRepository
    ) throws(RepositoryError) -> EncodedFeed {
        let result: Result<EncodedFeed, RepositoryError>
        do {
            let snapshot = try repository.snapshot()
            result = .success(EncodedFeed(kind, snapshot: snapshot, generation: rebuild.generation))
        } catch {
            result = .failure(error)
        }
        state.withLock { state in
            if case .success(let feed) = result, (state.feeds[kind]?.generation ?? 0) <= feed.generation {
                state.feeds[kind] = feed
            }
            state.rebuilds[kind] = nil
        }
        rebuild.finish(result)
        return try result.get()
    }
}

extension ChattFeedCache.State {
    /// Serve a feed fresh enough for a reader that arrived at `generation` (and saw `version`, if untrusted);
    /// else join a rebuild begun at or after that generation, wait out an older one, or lead a new one.
    fileprivate mutating func nextStep(
        _ kind: ChattFeedCache.Kind, generation: UInt64, version: ChattsVersion?
    ) -> ChattFeedCache.Step {
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
        return .lead(rebuild)
    }
}
