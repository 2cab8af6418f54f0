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

    /// Inserts one chatt; returns only once the server reports it committed, with the rows committed with it.
    /// Concurrent calls share one statement and one commit (see `InsertBatcher`), and chatts are numbered in the
    /// order the calls arrived.
    ///
    /// Never retried: if the connection drops after the statement was sent, the chatt may or may not be stored,
    /// so the caller gets `.unavailable` rather than a possible duplicate.
    @discardableResult
    public func add(_ chatt: NewChatt) throws(RepositoryError) -> ChattBatch {
        do {
            return try batcher.store(chatt)
        } catch {
            throw error.repositoryError(during: "add")
        }
    }

    /// Inserts one chatt as `add(_:)` does, without blocking: `completion` runs on the batcher's thread.
    public func add(_ chatt: NewChatt, completion: @escaping @Sendable (Result<ChattBatch, RepositoryError>) -> Void) {
        batcher.store(chatt) { outcome in
            completion(outcome.mapError { $0.repositoryError(during: "add") })
        }
    }

    // Oldest first: by time, then seq for the same microsecond (migrations/0002 explains why not seq alone); the
    // chatts_time_seq_idx index serves this order.
    static let selectAllSQL = "SELECT \(ChattColumns.list) FROM chatts ORDER BY time, seq"

    /// Every chatt, oldest first in posting order, with each field in its wire form; the version is
    /// computed from the very rows returned, so the two always agree.
    public func snapshot() throws(RepositoryError) -> ChattSnapshot {
        var chatts: [StoredChatt] = []
        let version = try readChatts { chatts.append($0.chatt) }
        return ChattSnapshot(chatts: chatts, version: version)
    }

    static let beginReadSQL = "BEGIN READ ONLY"
    /// A cursor sees the snapshot of its DECLARE throughout.
    static let declareFeedSQL = "DECLARE chatts_feed NO SCROLL CURSOR FOR \(selectAllSQL)"
    static let fetchSize = 1000
    static let fetchFeedSQL = "FETCH FORWARD \(fetchSize) FROM chatts_feed"
    static let commitSQL = "COMMIT"
    static let rollbackSQL = "ROLLBACK"

    /// Every chatt, oldest first, read through a cursor `fetchSize` rows at a time, so that neither libpq's result
    /// nor the caller ever holds the whole table: a feed is built next to one small result, not next to a copy of
    /// the table. The version is computed from the rows read.
    public func readChatts(_ row: (SequencedChatt) -> Void) throws(RepositoryError) -> ChattsVersion {
        do {
            return try pool.withConnection { connection throws(StoreError) in
                _ = try connection.query(Self.beginReadSQL)
                do throws(StoreError) {
                    _ = try connection.query(Self.declareFeedSQL)
                    var version = ChattsVersion(count: 0, lastSequence: 0)
                    var fetched = Self.fetchSize
                    while fetched == Self.fetchSize {
                        let rows = try connection.query(Self.fetchFeedSQL).sequencedChatts()
                        for chatt in rows {
                            row(chatt)
                            version.countIn(chatt)
                        }
                        fetched = rows.count
                    }
                    _ = try connection.query(Self.commitSQL)
                    return version
                } catch {
                    // Leaves the connection fit for the pool when only the statement failed.
                    _ = try? connection.query(Self.rollbackSQL)
                    throw error
                }
            }
        } catch {
            throw error.repositoryError(during: "snapshot")
        }
    }

    /// The store's version and the chatts after a position, in one statement and so one snapshot (the outer join
    /// gives the version a row when no chatt follows).
    static let chattsAfterSQL = """
        WITH store AS (SELECT count(*) AS count, coalesce(max(seq), 0) AS last FROM chatts)
        SELECT store.count, store.last, after.* FROM store LEFT JOIN (
            SELECT \(ChattColumns.list), time FROM chatts WHERE (time, seq) > ($1::timestamptz, $2::bigint)
        ) AS after ON true
        ORDER BY after.time, after.seq
        """
    static let everyChattSQL = """
        WITH store AS (SELECT count(*) AS count, coalesce(max(seq), 0) AS last FROM chatts)
        SELECT store.count, store.last, after.* FROM store LEFT JOIN (SELECT \(ChattColumns.list), time FROM chatts) AS after
        ON true
        ORDER BY after.time, after.seq
        """

    /// The chatts after `position` in feed order, with the store's version; the (time, seq) comparison walks
    /// the feed-order index from `position` on.
    public func chatts(after position: FeedPosition?) throws(RepositoryError) -> ChattDelta {
        do {
            return try pool.withConnection { connection throws(StoreError) in
                let result: PGResult
                if let position {
                    result = try connection.query(Self.chattsAfterSQL, [position.timestamp, String(position.sequence)])
                } else {
                    result = try connection.query(Self.everyChattSQL)
                }
                return ChattDelta(chatts: try result.sequencedChatts(), version: try result.chattsVersion())
            }
        } catch {
            throw error.repositoryError(during: "chatts after")
        }
    }

    static let versionSQL = "SELECT count(*) AS count, coalesce(max(seq), 0) AS last FROM chatts"

    /// The number of chatts and the highest sequence number: one index-only aggregate.
    public func version() throws(RepositoryError) -> ChattsVersion {
        do {
            return try pool.withConnection { connection throws(StoreError) in
                try connection.query(Self.versionSQL).chattsVersion()
            }
        } catch {
            throw error.repositoryError(during: "version")
        }
    }

    static let pingSQL = "SELECT 1"

    /// Succeeds when the database answers a trivial query.
    public func ping() throws(RepositoryError) {
        do {
            try pool.withConnection { connection throws(StoreError) in
                _ = try connection.query(Self.pingSQL)
            }
        } catch {
            throw error.repositoryError(during: "ping")
        }
    }
}

extension ChattsVersion {
    /// Counts in `chatt`, one more row of a full read.
    mutating func countIn(_ chatt: SequencedChatt) {
        self = ChattsVersion(count: count + 1, lastSequence: max(lastSequence, chatt.sequence))
    }
}
