/// Brings a database's schema up to date from the SQL files in a migrations directory.
///
/// Everything happens in one session holding an advisory lock, so servers starting together take turns: the
/// first applies what is missing and the others then find nothing to do. Each file runs in one transaction
/// together with its `schema_migrations` row, so a file is either fully applied and recorded, or neither.
public enum Migrator {
    /// The advisory lock key every chatterd process uses for migrations ("chatterd" as a big-endian bigint).
    static let lockKey = "7163082360129679972"
    /// Statement limit while migrating: longer than the pool's, since schema changes and waiting for another
    /// process's migration can take a while, but still bounded.
    static let migrationStatementTimeout = "5min"
    /// The limit the connection opens with, as the pool's do, until the migration's own is set.
    static let connectionStatementTimeout = Duration.seconds(5)

    static let setTimeoutSQL = "SELECT set_config('statement_timeout', $1, false)"
    static let resetTimeoutSQL = "RESET statement_timeout"
    static let lockSQL = "SELECT pg_advisory_lock($1::bigint)"
    static let unlockSQL = "SELECT pg_advisory_unlock($1::bigint)"
    static let createTableSQL = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version text PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now()
        )
        """
    static let appliedSQL = "SELECT version FROM schema_migrations"
    static let recordSQL = "INSERT INTO schema_migrations (version) VALUES ($1)"
    static let beginSQL = "BEGIN"
    static let commitSQL = "COMMIT"
    static let rollbackSQL = "ROLLBACK"

    /// Applies every migration in `directory` not yet recorded, in name order, over a connection of its own,
    /// opened from `conninfo` and closed afterwards (it blocks: migrations run before the server starts).
    /// - Returns: the versions applied by this call (empty when the schema was already current).
    /// - Throws: `.invalidConninfo`, `.migrationsDirectoryMissing`, `.invalidMigration(file:)`,
    ///   `.migrationFailed(file:)`, or a connection error.
    public static func migrate(conninfo: String, directory: String) throws(StoreError) -> [String] {
        let files = try MigrationFile.load(directory: directory)
        let parameters = try ConnectionParameters(conninfo: conninfo, statementTimeout: connectionStatementTimeout)
        return try migrate(files, on: try PGConnection(parameters: parameters))
    }

    /// Applies those of `files` not yet recorded on `connection`, and leaves its session settings as they were.
    static func migrate(_ files: [MigrationFile], on connection: PGConnection) throws(StoreError) -> [String] {
        try withMigrationLock(on: connection) { () throws(StoreError) in
            _ = try connection.query(createTableSQL)
            let applied = try appliedVersions(on: connection)
            var newlyApplied: [String] = []
            for file in files where !applied.contains(file.version) {
                try apply(file, on: connection)
                newlyApplied.append(file.version)
            }
            return newlyApplied
        }
    }

    private static func withMigrationLock<T>(
        on connection: PGConnection, _ body: () throws(StoreError) -> T
    ) throws(StoreError) -> T {
        _ = try connection.query(setTimeoutSQL, [migrationStatementTimeout])
        // RESET returns to the value the connection started with, so the session is as before.
        defer { _ = try? connection.query(resetTimeoutSQL) }
        _ = try connection.query(lockSQL, [lockKey])
        // If the connection died instead, the server has released the lock with the session.
        defer { _ = try? connection.query(unlockSQL, [lockKey]) }
        return try body()
    }

    private static func appliedVersions(on connection: PGConnection) throws(StoreError) -> Set<String> {
        let result = try connection.query(appliedSQL)
        let column = try result.columnIndex(named: "version")
        var versions: Set<String> = []
        for row in 0..<result.rowCount {
            versions.insert(try result.requiredString(row: row, column: column, name: "version"))
        }
        return versions
    }

    private static func apply(_ file: MigrationFile, on connection: PGConnection) throws(StoreError) {
        do throws(StoreError) {
            _ = try connection.query(beginSQL)
            try connection.execute(script: file.sql)
            // A file that ends the transaction itself would be committed without its record.
            guard connection.isInTransaction else {
                throw StoreError(.queryFailed, detail: "the file must not commit or roll back by itself")
            }
            _ = try connection.query(recordSQL, [file.version])
            _ = try connection.query(commitSQL)
        } catch {
            _ = try? connection.query(rollbackSQL)
            throw error.relabelled(.migrationFailed(file: file.fileName))
        }
    }
}
