import ChattModel

/// Stores chatts in PostgreSQL's `chatts` table through a connection pool.
public final class PostgresChattRepository: ChattRepository {
    private let pool: PGConnectionPool
    private let batcher: InsertBatcher

    /// Creates a repository that borrows connections from `pool`.
    public init(pool: PGConnectionPool) {
        self.pool = pool
        batcher = InsertBatcher(pool: pool)
    }

    /// Inserts one chatt; returns only once the server reports it committed. Concurrent calls share one statement
    /// and one commit (see `InsertBatcher`), and chatts are numbered in the order the calls arrived.
    ///
    /// Never retried: if the connection drops after the statement was sent, the chatt may or may not be stored,
    /// so the caller gets `.unavailable` rather than a possible duplicate.
    public func add(_ chatt: NewChatt) throws(RepositoryError) {
        do {
            try batcher.insert(chatt)
        } catch {
            throw error.repositoryError(during: "add")
        }
    }

    // The wire forms are made by the server: `id::text` is the lower-case canonical UUID, and to_char renders
    // UTC with exactly six fractional digits. Oldest first: by time, then seq for the same microsecond
    // (migrations/0002 explains why not seq alone); the chatts_time_seq_idx index serves this order.
    static let selectAllSQL = """
        SELECT seq, name, message, id::text AS id,
               to_char(time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS timestamp,
               geodata
        FROM chatts
        ORDER BY time, seq
        """

    /// Every chatt, oldest first in posting order, with each field in its wire form; the version is
    /// computed from the very rows returned, so the two always agree.
    public func snapshot() throws(RepositoryError) -> ChattSnapshot {
        do {
            return try pool.withConnection { connection throws(StoreError) in
                try Self.decode(connection.query(Self.selectAllSQL))
            }
        } catch {
            throw error.repositoryError(during: "snapshot")
        }
    }

    static let versionSQL = "SELECT count(*) AS count, coalesce(max(seq), 0) AS last FROM chatts"

    /// The number of chatts and the highest sequence number: one index-only aggregate.
    public func version() throws(RepositoryError) -> ChattsVersion {
        do {
            return try pool.withConnection { connection throws(StoreError) in
                let result = try connection.query(Self.versionSQL)
                let count = try result.columnIndex(named: "count")
                let last = try result.columnIndex(named: "last")
                guard result.rowCount == 1,
                    let countValue = Int(try result.requiredString(row: 0, column: count, name: "count")),
                    let lastValue = Int64(try result.requiredString(row: 0, column: last, name: "last"))
                else { throw StoreError(.decodingFailed(column: "count")) }
                return ChattsVersion(count: countValue, lastSequence: lastValue)
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

    private static func decode(_ result: PGResult) throws(StoreError) -> ChattSnapshot {
        let seq = try result.columnIndex(named: "seq")
        let name = try result.columnIndex(named: "name")
        let message = try result.columnIndex(named: "message")
        let id = try result.columnIndex(named: "id")
        let timestamp = try result.columnIndex(named: "timestamp")
        let geodata = try result.columnIndex(named: "geodata")
        var chatts: [StoredChatt] = []
        chatts.reserveCapacity(result.rowCount)
        var lastSequence: Int64 = 0
        for row in 0..<result.rowCount {
            guard let sequence = Int64(try result.requiredString(row: row, column: seq, name: "seq")) else {
                throw StoreError(.decodingFailed(column: "seq"))
            }
            lastSequence = max(lastSequence, sequence)
            chatts.append(StoredChatt(
                name: try result.requiredString(row: row, column: name, name: "name"),
                message: try result.requiredString(row: row, column: message, name: "message"),
                id: try result.requiredString(row: row, column: id, name: "id"),
                timestamp: try result.requiredString(row: row, column: timestamp, name: "timestamp"),
                geodata: result.string(row: row, column: geodata)
            ))
        }
        return ChattSnapshot(chatts: chatts, version: ChattsVersion(count: chatts.count, lastSequence: lastSequence))
    }
}
