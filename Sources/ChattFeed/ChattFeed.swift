import ChangeLog
import ChattModel
import Locking

/// The `/getmaps` and `/getchatts` feeds of one repository, kept coherent with it by following its change log
/// (`ChangeLog`): the one owner of the rules that say when a feed may be served. Every version it publishes shows
/// exactly the chatts of a position of the log, which it names (`Feed-Position`).
///
/// Posts go to the repository, which tells the log of each batch before answering it; a reader that arrives after
/// a 200 waits until the log has told the feed of that batch (`ChangeLog.caughtUp`), so a client always reads its
/// own writes. While the change listener is listening (and the feed is not strict), every other writer's commit is
/// announced, so a feed the log has told everything asked of it is current and served with no database access at
/// all (`readyAnswer`); otherwise every read first has the log tick the store and catch up (`ChangeLog.synced`).
///
/// The feed keeps a version of each kind a reader has asked for: the first read of a kind asks the log for a
/// flight, whose end builds it by a full read of the store at the log's position (see `ChattFeed+Following.swift`).
/// While nobody reads, the log's stretches are kept rather than appended, and the next read has them appended (past
/// `deferredChattsLimit` chatts the versions go, and the next read reads the store in full): a process taking posts
/// that nobody reads from does no feed work for them.
/// Past a database failure, a read may be answered with the last good feed, marked stale (`FeedAnswer.stale`).
public final class ChattFeed: LogFollower {
    /// Which feed: `/getmaps` rows (with geodata) or `/getchatts` rows (without).
    public enum Kind: Sendable, Hashable, CaseIterable {
        case maps, chatts
    }

    struct State {
        /// The versions published, each at the position of the log the feed was last told of.
        var feeds: [Kind: EncodedFeed] = [:]
        /// Kinds a reader waits for, until one takes them: the end of the log's next flight reads those with no
        /// version, and appends what was kept to those behind (`deferred`).
        var wanted: Set<Kind> = []
        /// Why the last full read failed, for the readers that wanted it; nil since one succeeded.
        var buildFailure: RepositoryError?
        /// Body sizes of the versions last built, so the next full read reserves about what it needs.
        var sizeHints: [Kind: Int] = [:]
        /// Kinds whose published version no reader has taken yet.
        var unread: Set<Kind> = []
        /// Stretches of the log told while no reader took the versions published before them: not appended yet,
        /// so the versions published are behind the log until the next read has them appended (`current`).
        var deferred: [LogSlice] = []
        var deferredChatts = 0
        var trusted = false
        /// Reads served from a published feed at once, reads that waited for the store, and full reads of the
        /// store, for /metrics.
        var hits = 0
        var misses = 0
        var fullReads = 0
    }

    /// The store: posts are written to it, and full reads come from it. Other reads (readiness) may use it directly.
    public let repository: any ChattRepository
    /// The change log the feeds follow.
    public let log: ChangeLog
    /// With `--strict-feeds`: notifications are never trusted, and no stale feed is served.
    private let strict: Bool
    /// How long a full read of the store may take.
    let patience: Duration
    /// The most chatts kept unappended while nobody reads; past them the versions are let go.
    let deferredChattsLimit: Int
    /// Told after each full read of the store.
    let fullReadEnded: @Sendable () -> Void
    let lastGood: LastGoodFeeds
    /// Everything readers look at; held only for moments, never while a version is built or the store is read.
    let state = Locked(State())

    /// Feeds of `repository`, following `log` (added as its follower here), not yet read, that do not trust
    /// notifications until told the listener is listening.
    ///
    /// - Parameters:
    ///   - strict: never trust notifications (every read has the log catch up with the store) and never serve a
    ///     stale feed.
    ///   - staleIfError: how long after it was last known current a feed may still be served while the database
    ///     cannot be reached (RFC 5861's `stale-if-error`, with the server as the cache); zero answers the failure.
    ///   - patience: how long a full read of the store may take.
    ///   - deferredChattsLimit: the most chatts kept unappended while nobody reads the feeds.
    ///   - fullReadEnded: told after each full read of the store, after its versions are published (those they
    ///     replace are let go of after that, when no reader holds them any more).
    ///   - now: the clock that age is measured with (injected by tests).
    public init(
        repository: any ChattRepository, log: ChangeLog, strict: Bool = false, staleIfError: Duration = .zero,
        patience: Duration = .seconds(30), deferredChattsLimit: Int = 5_000,
        fullReadEnded: @escaping @Sendable () -> Void = {},
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.repository = repository
        self.log = log
        self.strict = strict
        self.patience = patience
        self.deferredChattsLimit = deferredChattsLimit
        self.fullReadEnded = fullReadEnded
        lastGood = LastGoodFeeds(maxAge: strict ? .zero : staleIfError, now: now)
        log.follow(with: self)
    }

    /// Stores `chatt` through the repository; `completion` runs where the repository completes, after the log has
    /// been told of its batch, so any read that begins after it sees the chatt. Never blocks.
    public func add(_ chatt: NewChatt, completion: @escaping @Sendable (Result<Void, RepositoryError>) -> Void) {
        repository.add(chatt, completion: completion)
    }

    /// Whether the change listener is listening: while it is (and the feed is not strict), every change to the
    /// store is announced, so a feed the log is caught up with is current. The caller has the log read again on any
    /// change of trust: notifications may have been missed while not listening.
    public func listening(_ listening: Bool) {
        let trusted = listening && !strict
        state.withLock { $0.trusted = trusted }
    }

    /// Reads served from a published feed at once and reads that waited for the store, since start.
    public var counts: (hits: Int, misses: Int) {
        state.withLock { ($0.hits, $0.misses) }
    }

    /// Full reads of the store since start (a start, an edit, a chatt placed among older ones, a feed first asked
    /// for): everything else is taken in from the change log.
    public var fullReads: Int {
        state.withLock { $0.fullReads }
    }
}
