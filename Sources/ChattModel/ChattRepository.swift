import JSON

/// Where chatts are kept. Posts are stored through `add(_:completion:)`, which never blocks; reads suspend the
/// caller (no thread waits on the store) and give up at a deadline. What changed in the store is read from its
/// change log (migrations/0006): ticks, each holding the chatts whose commits its snapshot was the first to see.
public protocol ChattRepository: Sendable {
    /// Stores `chatt` without blocking the caller: `completion` runs once it is committed, or once it has failed;
    /// on a thread of the repository's choosing (the caller's, when it knows at once).
    func add(_ chatt: NewChatt, completion: @escaping @Sendable (Result<Void, RepositoryError>) -> Void)
    /// Tells `observer` of each batch of posts that committed (or may have: its outcome unknown), once, before any
    /// of its posts is answered; as it tells every observer added before.
    func observeCommits(_ observer: @escaping @Sendable () -> Void)
    /// Makes a tick of the change log if the store holds anything the newest one does not (chatts committed since,
    /// or an edit), and returns the newest tick. `.unavailable` once `deadline` has passed.
    func tick(before deadline: ContinuousClock.Instant) async throws(RepositoryError) -> LogTick
    /// The log after `position`, about `limit` rows of it (an event, or a tick that has none left to give; a store may
    /// give whole ticks past the limit), from `position`'s own tick on (`LogRead` says how to tell whether the store still has it). `.unavailable` once
    /// `deadline` has passed.
    func log(
        after position: LogPosition, limit: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> LogRead
    /// `tick(before:)`, then `log(after:limit:before:)` from `position` (nothing for nil), in one go where the store
    /// can: what a reader of the log does each time. `.unavailable` once `deadline` has passed.
    func tickAndRead(
        after position: LogPosition?, limit: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> (newest: LogTick, read: LogRead)
    /// Calls `row` with every chatt `position` holds, oldest first in feed order, as they are read (nothing is kept
    /// for the caller); false when the store no longer has the position's tick. `.unavailable` once `deadline` has
    /// passed.
    func readChatts(
        at position: LogPosition, before deadline: ContinuousClock.Instant, _ row: (SequencedChatt) -> Void
    ) async throws(RepositoryError) -> Bool
    /// Removes the chatt whose id is `id` (a canonical UUID), as `moderator` and for `reason`, which the store records
    /// with the removal: true once the removal has committed (commit observers are told first, as of a batch), false
    /// when the store holds no chatt with that id. `.unavailable` once `deadline` has passed, or when the outcome is
    /// unknown.
    func remove(
        id: String, by moderator: String, reason: String, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> Bool
    /// Removes up to `batch` of the oldest chatts posted more than `days` days ago, as retention does (recorded as
    /// `retention`): how many it removed, once their removal has committed (commit observers are told first when
    /// any were). `.unavailable` once `deadline` has passed.
    func removeExpired(
        olderThanDays days: Int, batch: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> Int
    /// Where the removed chatt whose id is `id` stood in feed order, or nil when no chatt with that id was removed.
    /// `.unavailable` once `deadline` has passed.
    func removedPlace(of id: String, before deadline: ContinuousClock.Instant) async throws(RepositoryError)
        -> FeedPosition?
    /// Succeeds when the store answers by `deadline`.
    func ping(before deadline: ContinuousClock.Instant) async throws(RepositoryError)
}

extension ChattRepository {
    /// The two calls, one after the other.
    public func tickAndRead(
        after position: LogPosition?, limit: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> (newest: LogTick, read: LogRead) {
        let newest = try await tick(before: deadline)
        guard let position else { return (newest, LogRead(ticks: [], isCut: false)) }
        return (newest, try await log(after: position, limit: limit, before: deadline))
    }

    /// `add(_:completion:)`, suspending until the outcome is known.
    public func add(_ chatt: NewChatt) async throws(RepositoryError) {
        let outcome = await withCheckedContinuation { continuation in
            add(chatt) { continuation.resume(returning: $0) }
        }
        try outcome.get()
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

/// A stored chatt with its sequence number.
public struct SequencedChatt: Sendable, Equatable {
    public var sequence: Int64
    public var chatt: StoredChatt

    public init(sequence: Int64, chatt: StoredChatt) {
        self.sequence = sequence
        self.chatt = chatt
    }

    /// Its place in feed order.
    public var position: FeedPosition {
        FeedPosition(timestamp: chatt.timestamp, sequence: sequence)
    }
}

/// A chatt removed from the store, as the change log tells of it.
public struct RemovedChatt: Sendable, Equatable {
    /// The removal's place among its tick's events, ordered with the chatts' sequence numbers.
    public var sequence: Int64
    /// The chatt's id, in its wire form.
    public var id: String
    /// Where the chatt stood in feed order.
    public var position: FeedPosition
    /// Where it was on the map: its geodata, "" when it had none; nil for a removal recorded before migrations/0009,
    /// whose place is unknown.
    public var geodata: String?

    public init(sequence: Int64, id: String, position: FeedPosition, geodata: String? = nil) {
        self.sequence = sequence
        self.id = id
        self.position = position
        self.geodata = geodata
    }
}

/// One event of the change log: a chatt posted or removed.
public enum LogEvent: Sendable, Equatable {
    case posted(SequencedChatt)
    case removed(RemovedChatt)

    /// Its place among its tick's events.
    public var sequence: Int64 {
        switch self {
        case .posted(let chatt): chatt.sequence
        case .removed(let removal): removal.sequence
        }
    }
}
