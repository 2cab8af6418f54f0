import JSON

/// Where chatts are kept. Posts are stored through `add(_:completion:)`, which never blocks; reads suspend the
/// caller (no thread waits on the store) and give up at a deadline.
public protocol ChattRepository: Sendable {
    /// Stores `chatt` without blocking the caller: `completion` runs once it is committed, with every chatt
    /// committed together with it, or once it has failed; on a thread of the repository's choosing (the caller's,
    /// when it knows at once).
    func add(_ chatt: NewChatt, completion: @escaping @Sendable (Result<ChattBatch, RepositoryError>) -> Void)
    /// Calls `row` with every chatt, oldest first in posting order, as they are read (nothing is kept for the
    /// caller), and returns the version of the store they make up; `.unavailable` once `deadline` has passed.
    func readChatts(
        before deadline: ContinuousClock.Instant, _ row: (SequencedChatt) -> Void
    ) async throws(RepositoryError) -> ChattsVersion
    /// The first `limit` chatts after `position` in feed order (after none for nil), and the version of the
    /// store, both read at one moment: whoever holds the chatts up to `position` can tell from the count whether
    /// the two together are the whole store. `.unavailable` once `deadline` has passed.
    func chatts(
        after position: FeedPosition?, limit: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> ChattDelta
    /// The store's current version: a cheap query that tells whether a cached feed is still current.
    /// `.unavailable` once `deadline` has passed.
    func version(before deadline: ContinuousClock.Instant) async throws(RepositoryError) -> ChattsVersion
    /// The first `limit` chatts committed after commit counter `count`, in commit order, and the store's commit
    /// position, both read at one moment: the chatts up to `count` and these make up every chatt committed up to
    /// the position when fewer than `limit` came (and the position's epoch is the caller's). `.unavailable` once
    /// `deadline` has passed.
    func committed(
        after count: Int64, limit: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> CommittedChatts
    /// Succeeds when the store answers by `deadline`.
    func ping(before deadline: ContinuousClock.Instant) async throws(RepositoryError)
}

extension ChattRepository {
    /// `add(_:completion:)`, suspending until the outcome is known; returns the chatts committed with `chatt`.
    @discardableResult
    public func add(_ chatt: NewChatt) async throws(RepositoryError) -> ChattBatch {
        let outcome = await withCheckedContinuation { continuation in
            add(chatt) { continuation.resume(returning: $0) }
        }
        return try outcome.get()
    }
}

/// Identifies the set of stored chatts. Chatts are only ever added, so the count alone changes with every
/// committed post; the last sequence number also catches an operator deleting one row and a post adding one, and
/// the commit position, read at the same moment, any edit (its epoch) and any commit (its count).
public struct ChattsVersion: Sendable, Equatable {
    public var count: Int
    public var lastSequence: Int64
    /// The store's commit position when the version was read.
    public var position: CommitPosition

    public init(count: Int, lastSequence: Int64, position: CommitPosition = CommitPosition(epoch: 0, count: 0)) {
        self.count = count
        self.lastSequence = lastSequence
        self.position = position
    }
}

/// How a repository call failed, as far as a client needs to know.
public enum RepositoryError: Error, Sendable, Equatable {
    /// The store is down, overloaded or timed out; the client may retry later (503).
    /// For `add`, the chatt was not stored, or its outcome is unknown.
    case unavailable(String)
    /// The store refused the value itself (e.g. too long, bad encoding) (400).
    case rejected(String)
    /// Anything else (500). The string is for logs only, never for clients.
    case failed(String)

    /// What the repository said, for the operator's log (never for clients).
    public var detail: String {
        switch self {
        case .unavailable(let detail), .rejected(let detail), .failed(let detail): detail
        }
    }
}

/// Where a chatt stands in feed order (migrations/0002): by time, then by sequence number.
public struct FeedPosition: Sendable, Hashable, Comparable {
    /// The wire timestamp (`StoredChatt.timestamp`): fixed-width UTC, so its text order is its time order.
    public var timestamp: String
    /// The chatt's sequence number, which orders chatts of the same microsecond.
    public var sequence: Int64

    public init(timestamp: String, sequence: Int64) {
        self.timestamp = timestamp
        self.sequence = sequence
    }

    public static func < (lhs: FeedPosition, rhs: FeedPosition) -> Bool {
        // Bytes, not String's Unicode ordering: the timestamps are ASCII of one width.
        let order = lhs.timestamp.utf8.lexicographicallyPrecedes(rhs.timestamp.utf8)
        return order || (lhs.timestamp == rhs.timestamp && lhs.sequence < rhs.sequence)
    }
}

/// A stored chatt with its sequence number and its commit counter.
public struct SequencedChatt: Sendable, Equatable {
    public var sequence: Int64
    public var chatt: StoredChatt
    /// The commit-order counter the store gave it (`CommitPosition.count`); 0 where none was given.
    public var commit: Int64

    public init(sequence: Int64, chatt: StoredChatt, commit: Int64 = 0) {
        self.sequence = sequence
        self.chatt = chatt
        self.commit = commit
    }

    /// Its place in feed order.
    public var position: FeedPosition {
        FeedPosition(timestamp: chatt.timestamp, sequence: sequence)
    }
}

/// The chatts one commit stored together, as the store reads them back, in feed order. Every `add` whose chatt
/// is among them returns the same batch, so whoever keeps a copy of the store can take them in once.
///
/// A commit's chatts take consecutive commit counters, so whoever holds the store up to `previous` in
/// `position`'s epoch holds it up to `position` with them. Only rows a refused batch stored one by one, each
/// committed alone, may leave gaps between them (`isContiguous`).
public final class ChattBatch: Sendable {
    public let chatts: [SequencedChatt]
    /// The store's commit position right after the batch: its epoch, and the batch's last commit counter.
    public let position: CommitPosition
    /// The commit counter before the batch's first row.
    public let previous: Int64

    /// The batch of `chatts` committed in `epoch`; its counters are the rows' own.
    public init(_ chatts: [SequencedChatt], epoch: Int64 = CommitPosition.firstEpoch) {
        self.chatts = chatts.sorted { $0.position < $1.position }
        let commits = chatts.map(\.commit)
        previous = (commits.min() ?? 1) - 1
        position = CommitPosition(epoch: epoch, count: commits.max() ?? 0)
    }

    /// Whether nobody else's commit falls between the batch's rows.
    public var isContiguous: Bool {
        position.count - previous == Int64(chatts.count)
    }
}

/// Chatts in commit order after a commit counter, with the store's commit position at that moment.
public struct CommittedChatts: Sendable, Equatable {
    /// In commit order, each with its `commit` counter.
    public var chatts: [SequencedChatt]
    /// The store's position in the same snapshot as the chatts.
    public var position: CommitPosition

    public init(chatts: [SequencedChatt], position: CommitPosition) {
        self.chatts = chatts
        self.position = position
    }
}

/// Chatts read after a feed position, with the store's version at that moment.
public struct ChattDelta: Sendable, Equatable {
    /// In feed order.
    public var chatts: [SequencedChatt]
    public var version: ChattsVersion

    public init(chatts: [SequencedChatt], version: ChattsVersion) {
        self.chatts = chatts
        self.version = version
    }
}
