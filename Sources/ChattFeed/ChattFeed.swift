import ChattModel
import Locking

/// The `/getmaps` and `/getchatts` feeds of one repository, kept coherent with it: the one owner of the rules that
/// say when a feed is current. Posts go through it (`add`), so their rows are taken in before their 200; the change
/// listener's notices come to it (`chattsAdded`, `invalidate`, `listening`, `audit`); readers ask it for an answer
/// (`readyAnswer`, `answer`), which it counts as a hit or a miss, and which past a database failure may be the last
/// good feed, marked stale (`FeedAnswer.stale`).
///
/// A generation counter orders events: every change the feed learns of bumps it, and every encoded feed is tagged
/// with the generation read *before* its read of the store began (or at which its rows were taken in), so a change
/// during a read leaves the result stale at once. A request that sees generation `g` when it arrives is served a
/// feed tagged `g` or later: one that reflects everything acknowledged before the request (a post takes its rows
/// in, or invalidates, before its 200, so a client always reads its own writes).
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
/// Readers only ever hold `state`'s lock for a moment: a new version is built outside it, from the version current
/// when it began, and published under it only if nothing moved meanwhile (see `ChattFeed+Posts.swift`); a read of
/// the store runs outside it too, and when many requests find a feed stale together, one reads the store (single
/// flight) while the others suspend, holding no thread, each until its own deadline (see `ChattFeed+Reads.swift`).
public final class ChattFeed: Sendable {
    /// Which feed: `/getmaps` rows (with geodata) or `/getchatts` rows (without).
    public enum Kind: Sendable, Hashable, CaseIterable {
        case maps, chatts
    }

    struct State {
        var generation: UInt64 = 0
        /// The generation of the latest change that may have edited or removed rows, or gone unseen: a feed tagged
        /// before it is read again in full, one tagged at or after it only needs the rows added since.
        var editGeneration: UInt64 = 0
        var trusted = false
        /// The last store version a read saw while untrusted.
        var lastSeenVersion: ChattsVersion?
        var feeds: [Kind: EncodedFeed] = [:]
        var rebuilds: [Kind: FeedRebuild] = [:]
        /// Reads of the store that counted it (full reads and catch-ups), and that count at the change listener's
        /// audit that found the feeds out of step with the store (see `audit`).
        var countedReads: UInt64 = 0
        var suspectedAt: UInt64?
        /// Reads served from a stored feed, and reads that ran a query of the store, for /metrics.
        var hits = 0
        var misses = 0
    }

    /// The store the feeds are read from and posts are written to. Other reads (readiness) may use it directly.
    public let repository: any ChattRepository
    /// With `--strict-feeds`: notifications are never trusted, and no stale feed is served.
    private let strict: Bool
    /// The most new rows a stale feed takes in; more are read again in full (see `readStore`).
    let catchUpLimit: Int
    /// Told after each full read of the store.
    let fullReadEnded: @Sendable () -> Void
    /// Told of each commit of this process once, with its batch, and of each post whose outcome is unknown (nil).
    let committed: @Sendable (ChattBatch?) -> Void
    let lastGood: LastGoodFeeds
    /// Everything readers look at; held only for moments, never while a version is built or the store is read.
    let state = Locked(State())
    /// The batches taken in lately, held while an append builds its version, so appends follow one another (the
    /// other posts of a batch wait until its rows are published). Readers never take it.
    let appends = Locked(RecentBatches())

    /// Feeds of `repository`, not yet read, that do not trust notifications until told the listener is listening.
    ///
    /// - Parameters:
    ///   - strict: never trust notifications (every read checks the store's version) and never serve a stale feed.
    ///   - staleIfError: how long after it was last known current a feed may still be served while the database
    ///     cannot be reached (RFC 5861's `stale-if-error`, with the server as the cache); zero answers the failure.
    ///   - catchUpLimit: the most new rows a stale feed takes in; more are read again in full. At about 180 bytes a
    ///     row, 5 000 rows are under a megabyte of body, held once as stored and once as read.
    ///   - fullReadEnded: told after each full read of the store, before its version is published (the one it
    ///     replaces is let go of after that, when no reader holds it any more).
    ///   - committed: told of each commit of this process once (its batch), and of each post whose outcome is
    ///     unknown (nil), when the feeds take them in (the feed streams follow them).
    ///   - now: the clock that age is measured with (injected by tests).
    public init(
        repository: any ChattRepository, strict: Bool = false, staleIfError: Duration = .zero,
        catchUpLimit: Int = 5_000, fullReadEnded: @escaping @Sendable () -> Void = {},
        committed: @escaping @Sendable (ChattBatch?) -> Void = { _ in },
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.fullReadEnded = fullReadEnded
        self.committed = committed
        self.repository = repository
        self.strict = strict
        self.catchUpLimit = catchUpLimit
        lastGood = LastGoodFeeds(maxAge: strict ? .zero : staleIfError, now: now)
    }

    // MARK: - Change notices

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

    /// Whether the change listener is listening: while it is (and the feed is not strict), every change to the
    /// store is announced, so a current feed is served without asking the database. Any change of trust also
    /// invalidates: notifications may have been missed while not listening.
    public func listening(_ listening: Bool) {
        let trusted = listening && !strict
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

    // MARK: - Figures

    /// Reads served from a stored feed and reads that queried the store, since start.
    public var counts: (hits: Int, misses: Int) {
        state.withLock { ($0.hits, $0.misses) }
    }

    /// The current generation; every change the feed learns of increases it.
    var generation: UInt64 {
        state.withLock { $0.generation }
    }

    /// The feed when it can be served with no database access (trusted, and nothing invalidated it), else nil.
    func currentFeed(_ kind: Kind) -> EncodedFeed? {
        state.withLock { $0.currentFeed(kind) }
    }
}

extension ChattFeed.State {
    /// The feed of `kind` if it may be served with no database access.
    func currentFeed(_ kind: ChattFeed.Kind) -> EncodedFeed? {
        guard trusted, let feed = feeds[kind], feed.generation == generation else { return nil }
        return feed
    }
}
