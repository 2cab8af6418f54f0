import ChattModel
import Dispatch
import JSON
import Locking

/// The encoded `/getmaps` and `/getchatts` feeds, shared by every request until the store may have changed.
///
/// A generation counter orders events: every change the cache learns of bumps it, and every encoded feed is
/// tagged with the generation read *before* its read of the store began (or at which its rows were taken in), so
/// a change during a read leaves the result stale at once. A request that sees generation `g` when it arrives is
/// served a feed tagged `g` or later: one that reflects everything acknowledged before the request (a post takes
/// its rows in, or invalidates, before its 200, so a client always reads its own writes).
///
/// Chatts are only ever added in normal operation, so a change is taken in rather than re-read when it can be:
/// a commit of this process brings its rows (`append`), and an insert announced by another writer
/// (`chattsAdded`) is caught up by reading only the rows after the feed's settled ones, together with the store's
/// count, which proves the result whole. An edit, a removal, a change of trust or an unannounced new version
/// (`invalidate`) makes the next read a full one.
///
/// While change notifications are trusted, a feed tagged with the current generation is served with no
/// database access at all. Otherwise every read first asks `repository.version(before:)`, and a feed read at that
/// version is current; a version not seen before bumps the generation, so the tagging above covers it too.
///
/// When many requests find a feed stale together, one reads the store (single flight); the others wait for it
/// if it began at or after their generation, else for it to end and then for the next one. Readers suspend
/// while they wait, holding no thread, each until its own deadline.
public final class ChattFeedCache: Sendable {
    /// Which feed: `/getmaps` rows (with geodata) or `/getchatts` rows (without).
    public enum Kind: Sendable, Hashable {
        case maps, chatts
    }

    fileprivate struct State {
        var generation: UInt64 = 0
        /// The generation of the latest change that may have edited or removed rows, or gone unseen: a feed tagged
        /// before it is read again in full, one tagged at or after it only needs the rows added since.
        var editGeneration: UInt64 = 0
        var trusted = false
        /// The last store version a read saw while untrusted.
        var lastSeenVersion: ChattsVersion?
        var feeds: [Kind: EncodedFeed] = [:]
        var rebuilds: [Kind: FeedRebuild] = [:]
        /// The batches taken in lately: the other posts of a batch find their rows there already.
        var recentBatches: [ChattBatch] = []
        /// Reads of the store that counted it (full reads and catch-ups), and that count at the change listener's
        /// audit that found the feeds out of step with the store (see `audit`).
        var countedReads: UInt64 = 0
        var suspectedAt: UInt64?
        /// Reads served from a stored feed, and reads that ran a query of the store, for /metrics.
        var hits = 0
        var misses = 0
    }

    /// What a reader does next, decided under the lock.
    fileprivate enum Step {
        case serve(EncodedFeed)
        case join(FeedRebuild)
        case awaitOlder(FeedRebuild)
        /// Read the store for `rebuild`: only the rows after those of `stale` when given, else everything.
        case lead(FeedRebuild, stale: EncodedFeed?, sizeHint: Int)
    }

    /// The answer to a reader whose deadline passed while it waited for another's read of the store.
    static let outOfTime = RepositoryError.unavailable("feed read: no answer from the store in time")

    /// How many recent batches are remembered; the posts of one batch ask within moments of each other.
    static let recentBatchLimit = 16

    private let state = Locked(State())

    /// An empty cache that does not trust notifications.
    public init() {}

    /// Something may have changed in the store, edits and removals included: reads from now on read it in full.
    public func invalidate() {
        state.withLock { state in
            state.generation += 1
            state.editGeneration = state.generation
        }
    }

    /// Chatts were added to the store by someone else, and nothing else changed: the next read fetches the rows
    /// after the feed's settled ones instead of everything.
    public func chattsAdded() {
        state.withLock { $0.generation += 1 }
    }

    /// Takes in the chatts of a commit of this process: the current feeds get them appended (or put in their
    /// place among the newest rows) at once. A feed that cannot place them, or is stale already, is left for the
    /// next read to catch up. Either way a read that begins after this call returns sees them.
    public func append(_ batch: ChattBatch) {
        state.withLock { state in
            guard !state.recentBatches.contains(where: { $0 === batch }) else { return }
            state.recentBatches.append(batch)
            if state.recentBatches.count > Self.recentBatchLimit { state.recentBatches.removeFirst() }
            let next = state.generation + 1
            var taken: [Kind: EncodedFeed] = [:]
            for (kind, feed) in state.feeds where feed.generation == state.generation {
                taken[kind] = feed.adding(batch.chatts, generation: next)
            }
            state.generation = next
            state.feeds.merge(taken) { _, new in new }
            // Untrusted, the next read's version check would otherwise take our own commit for a stranger's.
            if !state.trusted, !taken.isEmpty, let version = taken.values.first?.version,
                taken.values.allSatisfy({ $0.version == version })
            {
                state.lastSeenVersion = version
            }
        }
    }

    /// While true, a current feed is served without asking the database; call it with true only while
    /// every change to the store is followed by `invalidate()` (a `LISTEN` that is known to be listening).
    /// Any change of trust also invalidates: notifications may have been missed while not listening.
    public func setNotificationsTrusted(_ trusted: Bool) {
        state.withLock { state in
            guard state.trusted != trusted else { return }
            state.trusted = trusted
            state.generation += 1
            state.editGeneration = state.generation
        }
    }

    /// The fallback for a notification that never came: a commit announced after it committed (as chatterd's
    /// inserts are) is unannounced if its process dies in between. Called with the store's version at each of
    /// the change listener's health checks. A current feed that differs from the store at two checks in a row,
    /// with no counted read of the store in between, missed a change: the next read catches up, and its count of
    /// the store (the version check) tells whether rows were only added or everything must be read again.
    public func audit(storeVersion: ChattsVersion) {
        state.withLock { state in
            let current = state.feeds.values.filter { $0.generation == state.generation }
            guard state.trusted, current.contains(where: { $0.version != storeVersion }) else {
                state.suspectedAt = nil
                return
            }
            guard state.suspectedAt == state.countedReads else {
                state.suspectedAt = state.countedReads
                return
            }
            state.suspectedAt = nil
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

    /// A feed at least as new as the store was when this call began, re-read if needed. Suspends while the store
    /// is read, by this caller or by another one it waits for, and gives up at `deadline` (`.unavailable`).
    public func feed(
        _ kind: Kind, from repository: any ChattRepository, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> EncodedFeed {
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
                return try await lead(rebuild, kind, repository, stale: stale, sizeHint: sizeHint, before: deadline)
            }
        }
    }

    /// Reads the store for `rebuild`, stores and publishes the result.
    private func lead(
        _ rebuild: FeedRebuild, _ kind: Kind, _ repository: any ChattRepository, stale: EncodedFeed?, sizeHint: Int,
        before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> EncodedFeed {
        let result: Result<EncodedFeed, RepositoryError>
        do {
            result = .success(try await read(
                kind, repository, stale: stale, sizeHint: sizeHint, generation: rebuild.generation, before: deadline))
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
    private func read(
        _ kind: Kind, _ repository: any ChattRepository, stale: EncodedFeed?, sizeHint: Int, generation: UInt64,
        before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> EncodedFeed {
        var sizeHint = sizeHint
        if let stale {
            let delta = try await repository.chatts(after: stale.tip.boundary, before: deadline)
            if let caughtUp = stale.caughtUp(with: delta, generation: generation) { return caughtUp }
            // Not the whole store (a removal, or a row placed among the settled ones): read it all.
            sizeHint = stale.tip.length
            state.withLock { state in
                if state.feeds[kind] === stale { state.feeds[kind] = nil }
            }
        }
        // Some slack over the last size, so that growth rarely copies the body being built.
        var builder = FeedLineageBuilder(kind: kind, keepsTail: true, capacity: sizeHint + sizeHint / 16)
        let version = try await repository.readChatts(before: deadline) { builder.append($0) }
        return EncodedFeed(builder, version: version, generation: generation)
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
