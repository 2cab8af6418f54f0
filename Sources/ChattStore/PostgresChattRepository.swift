import ChattModel
import Locking

/// Stores chatts in PostgreSQL's `chatts` table through a connection pool, and reads what changed from the change
/// log of migrations/0006.
public final class PostgresChattRepository: ChattRepository {
    let pool: PGConnectionPool
    private let batcher: InsertBatcher
    /// Told of each batch the batcher commits, and of each removal.
    let commitObservers = Locked<[@Sendable () -> Void]>([])

    /// Names this repository's process in the announcements of the ticks it makes (migrations/0006); give it to the
    /// change listener of the same process, whose change log has read those ticks already.
    public let origin = String(UInt64.random(in: 0...UInt64.max), radix: 16)

    /// Creates a repository that borrows connections from `pool`.
    public init(pool: PGConnectionPool) {
        self.pool = pool
        batcher = InsertBatcher(pool: pool)
    }

    /// Inserts one chatt without blocking: `completion` runs once the server reports it committed, or once it has
    /// failed (`InsertBatcher.store(_:completion:)` says on which thread). Concurrent calls share one statement and
    /// one commit, and chatts take sequence numbers in the order the calls arrived.
    ///
    /// Never retried: if the connection drops after the statement was sent, the chatt may or may not be stored,
    /// so the caller gets `.unavailable` rather than a possible duplicate.
    public func add(_ chatt: NewChatt, completion: @escaping @Sendable (Result<Void, RepositoryError>) -> Void) {
        batcher.store(chatt) { outcome in
            completion(outcome.mapError { $0.repositoryError(during: "add") })
        }
    }

    /// The batcher tells `observer` of each batch on the store's loop, before answering its posts.
    public func observeCommits(_ observer: @escaping @Sendable () -> Void) {
        commitObservers.withLock { $0.append(observer) }
        batcher.observeCommits(observer)
    }

    // The change log's statements run up to a hundred times a second in every process: prepared, so that the
    // server parses each once per connection (psql: 0.78 ms a read of the log sent as text, 0.24 ms prepared).
    static let tickStatement = PreparedStatement(
        name: "chatts_tick", sql: "SELECT \(TickColumns.list) FROM chatts_tick($1) AS chatts_ticks")
    /// A tick and the log after a position, in one statement (migrations/0007): the reader's every flight.
    static let tickAndReadStatement = PreparedStatement(
        name: "chatts_events_after",
        sql: "SELECT * FROM chatts_events_after($1::bigint, $2::bigint, $3::integer, $4)")

    /// The log from a position's tick on (migrations/0007's `chatts_events`): whole ticks from it until the limit is
    /// reached, each with its chatts posted and removed after the position, in (tick, seq) order; a tick with none
    /// left gives one row of NULL event columns.
    static let logStatement = PreparedStatement(
        name: "chatts_events", sql: "SELECT * FROM chatts_events($1::bigint, $2::bigint, $3::integer)")

    /// Repeatable read, so that the tick and the cursor read one snapshot: the transaction's, which sees every chatt
    /// the tick's snapshot saw.
    static let beginReadSQL = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
    static let positionTickSQL = "SELECT tick FROM chatts_ticks WHERE tick = $1::bigint AND token = $2::bigint"
    /// Oldest first: by time, then seq for the same microsecond (migrations/0002 explains why not seq alone); the
    /// chatts_time_seq_idx index serves this order. The chatts of the position: those its tick's snapshot saw, but
    /// the tick's own after the position's seq.
    static let declareFeedSQL = """
        DECLARE chatts_feed NO SCROLL CURSOR FOR
        SELECT \(ChattColumns.list) FROM chatts, (SELECT snapshot, xids FROM chatts_ticks WHERE tick = $1::bigint) AS at
        WHERE pg_visible_in_snapshot(chatts.xid, at.snapshot) AND NOT (chatts.xid = ANY (at.xids) AND seq > $2::bigint)
        ORDER BY time, seq
        """
    static let fetchSize = 1000
    static let fetchFeedSQL = "FETCH FORWARD \(fetchSize) FROM chatts_feed"
    static let commitSQL = "COMMIT"
    static let rollbackSQL = "ROLLBACK"

    static let pingSQL = "SELECT 1"
    /// migrations/0007's removal, recorded with who and why, in a transaction of its own.
    static let removeSQL = "SELECT chatts_remove($1::uuid, $2, $3)"
    static let retainSQL = "SELECT chatts_retain($1::integer, $2::integer)"
    static let removedPlaceSQL = """
        SELECT to_char(chatt_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), chatt_seq
        FROM chatts_removals WHERE id = $1::uuid ORDER BY seq LIMIT 1
        """
}
