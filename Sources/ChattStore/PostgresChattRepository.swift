import ChattModel

/// Stores chatts in PostgreSQL's `chatts` table through a connection pool.
public final class PostgresChattRepository: ChattRepository {
    let pool: PGConnectionPool
    private let batcher: InsertBatcher

    /// Names this repository's process in its announcements of new chatts (`ChattsChangedNotice`); give it to the
    /// change listener of the same process, which has taken those chatts in already.
    public var origin: String { batcher.origin }

    /// Creates a repository that borrows connections from `pool`.
    public init(pool: PGConnectionPool) {
        self.pool = pool
        batcher = InsertBatcher(pool: pool, origin: String(UInt64.random(in: 0...UInt64.max), radix: 16))
    }

    /// Inserts one chatt without blocking: `completion` runs once the server reports it committed, with the rows
    /// committed with it, or once it has failed (`InsertBatcher.store(_:completion:)` says on which thread).
    /// Concurrent calls share one statement and one commit, and chatts are numbered in the order the calls arrived.
    ///
    /// Never retried: if the connection drops after the statement was sent, the chatt may or may not be stored,
    /// so the caller gets `.unavailable` rather than a possible duplicate.
    public func add(_ chatt: NewChatt, completion: @escaping @Sendable (Result<ChattBatch, RepositoryError>) -> Void) {
        batcher.store(chatt) { outcome in
            completion(outcome.mapError { $0.repositoryError(during: "add") })
        }
    }

    // Oldest first: by time, then seq for the same microsecond (migrations/0002 explains why not seq alone); the
    // chatts_time_seq_idx index serves this order.
    static let selectAllSQL = "SELECT \(ChattColumns.list) FROM chatts ORDER BY time, seq"

    /// Repeatable read, so that the clock and the cursor read one snapshot: the transaction's.
    static let beginReadSQL = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
    static let clockSQL = "SELECT \(ClockColumns.list) FROM chatts_clock"
    static let declareFeedSQL = "DECLARE chatts_feed NO SCROLL CURSOR FOR \(selectAllSQL)"
    static let fetchSize = 1000
    static let fetchFeedSQL = "FETCH FORWARD \(fetchSize) FROM chatts_feed"
    static let commitSQL = "COMMIT"
    static let rollbackSQL = "ROLLBACK"

    /// The store's version (with the clock) and the first chatts after a position, in one statement and so one
    /// snapshot (the outer join gives the version a row when no chatt follows).
    static let chattsAfterSQL = """
        WITH store AS (\(storeSQL))
        SELECT store.count, store.last, \(ClockColumns.list), after.* FROM store CROSS JOIN chatts_clock LEFT JOIN (
            SELECT \(ChattColumns.list), time FROM chatts
            WHERE (time, seq) > ($1::timestamptz, $2::bigint) ORDER BY time, seq LIMIT $3
        ) AS after ON true
        ORDER BY after.time, after.seq
        """
    static let everyChattSQL = """
        WITH store AS (\(storeSQL))
        SELECT store.count, store.last, \(ClockColumns.list), after.* FROM store CROSS JOIN chatts_clock LEFT JOIN (
            SELECT \(ChattColumns.list), time FROM chatts ORDER BY time, seq LIMIT $1
        ) AS after ON true
        ORDER BY after.time, after.seq
        """

    private static let storeSQL = "SELECT count(*) AS count, coalesce(max(seq), 0) AS last FROM chatts"
    static let versionSQL = "SELECT store.*, \(ClockColumns.list) FROM (\(storeSQL)) AS store CROSS JOIN chatts_clock"

    /// The clock and the first chatts committed after a counter, in one statement (the outer join gives the clock a
    /// row when no chatt follows); the position index serves it.
    static let committedAfterSQL = """
        SELECT \(ClockColumns.list), after.* FROM chatts_clock LEFT JOIN (
            SELECT \(ChattColumns.list) FROM chatts WHERE position > $1::bigint ORDER BY position LIMIT $2
        ) AS after ON true
        ORDER BY after.position
        """

    static let pingSQL = "SELECT 1"
}

extension ChattsVersion {
    /// Counts in `chatt`, one more row of a full read.
    mutating func countIn(_ chatt: SequencedChatt) {
        count += 1
        lastSequence = max(lastSequence, chatt.sequence)
    }
}
