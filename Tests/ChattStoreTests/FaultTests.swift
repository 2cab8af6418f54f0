import ChattModel
@testable import ChattStore
import Foundation
import Locking
import Testing

extension DatabaseTests {
    @Suite struct FaultTests {
        @Test func everyConnectionCarriesTheTimeoutsAndKeepsOperatorOptions() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(extra: ["options": "-c TimeZone=Asia/Kathmandu"])
                defer { pool.close() }
                let settings = try pool.withConnection { connection throws(StoreError) in
                    let result = try connection.query(Self.settingsSQL)
                    return (0..<4).map { result.string(row: 0, column: $0) }
                }
                #expect(settings == ["5s", "10s", "chatterd", "Asia/Kathmandu"])
            }
        }

        static let settingsSQL = """
            SELECT current_setting('statement_timeout'), current_setting('idle_in_transaction_session_timeout'),
                   current_setting('application_name'), current_setting('TimeZone')
            """

        @Test func statementTimeoutIsUnavailable() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(statementTimeout: .milliseconds(300))
                defer { pool.close() }
                let repository = PostgresChattRepository(pool: pool)
                let locker = try ConnectionHolder.lockingChatts(in: database)
                defer { locker.release() }
                let chatt = NewChatt(name: "a", message: "b")
                var error: RepositoryError?
                let elapsed = seconds { error = caught { () throws(RepositoryError) in try repository.add(chatt) } }
                #expect(error?.kind == .unavailable)
                #expect(elapsed > 0.25 && elapsed < 2, "\(elapsed) s")
                let raw = caught { () throws(StoreError) in
                    try pool.withConnection { connection throws(StoreError) in
                        _ = try connection.query("SELECT count(*) FROM chatts")
                    }
                }
                #expect(raw?.sqlState == "57014")
                locker.release()
                try repository.add(NewChatt(name: "c", message: "d"))
                #expect(try repository.all().map(\.name) == ["c"])
            }
        }

        @Test func poolExhaustionIsUnavailableAfterTheAcquireTimeout() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .milliseconds(300))
                defer { pool.close() }
                let holder = ConnectionHolder(pool)
                defer { holder.release() }
                try #require(holder.waitUntilHeld())
                #expect(pool.stats == PGConnectionPool.Stats(size: 1, inUse: 1, idle: 0))
                var error: StoreError?
                let elapsed = seconds { error = caught { () throws(StoreError) in try pool.withConnection { _ in } } }
                #expect(error?.code == .poolTimeout)
                #expect(error?.repositoryError.kind == .unavailable)
                #expect(elapsed > 0.25 && elapsed < 1.5, "\(elapsed) s")
                holder.release()
                try PostgresChattRepository(pool: pool).ping()
                #expect(pool.stats == PGConnectionPool.Stats(size: 1, inUse: 0, idle: 1))
            }
        }

        @Test func recoversAfterTheServerKillsEveryPooledConnection() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(size: 4)
                defer { pool.close() }
                let repository = PostgresChattRepository(pool: pool)
                try openEveryConnection(of: pool)
                #expect(pool.stats.idle == 4)
                #expect(try terminateBackends(of: database) == 4)

                var failures: [RepositoryError] = []
                while failures.count < 2, let error = caught({ () throws(RepositoryError) in try repository.ping() }) {
                    failures.append(error)
                }
                #expect(failures.count <= 1, "\(failures)")
                // The other dead connections are noticed on checkout, not by failing callers.
                let later = Locked<[RepositoryError]>([])
                onThreads(8) { _ in
                    if let error = caught({ () throws(RepositoryError) in try repository.ping() }) {
                        later.withLock { $0.append(error) }
                    }
                }
                #expect(later.withLock { $0 } == [])
                try repository.add(NewChatt(name: "after", message: "restart"))
                #expect(try repository.all().map(\.name) == ["after"])
            }
        }

        @Test func connectionLostMidCallIsUnavailableAndDiscarded() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(size: 1)
                defer { pool.close() }
                let error = caught { () throws(StoreError) in
                    try pool.withConnection { connection throws(StoreError) in
                        _ = try connection.query("SELECT 1")
                        _ = try terminateBackends(of: database)
                        _ = try connection.query(ChattBatchInsert.rowStatement, ["a", "b", nil])
                    }
                }
                #expect(error?.code == .connectionLost)
                #expect(error?.repositoryError.kind == .unavailable)
                #expect(pool.stats == PGConnectionPool.Stats(size: 1, inUse: 0, idle: 0))
                #expect(try PostgresChattRepository(pool: pool).all() == [])
            }
        }

        @Test func closedPoolIsUnavailable() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool()
                let repository = PostgresChattRepository(pool: pool)
                try repository.ping()
                pool.close()
                #expect(pool.stats.idle == 0)
                let error = caught { () throws(StoreError) in try pool.withConnection { _ in } }
                #expect(error?.code == .poolClosed)
                #expect(caught { () throws(RepositoryError) in try repository.ping() }?.kind == .unavailable)
            }
        }

        /// Makes the pool open all its connections by having `size` callers hold one at the same time.
        private func openEveryConnection(of pool: PGConnectionPool) throws {
            let inside = DispatchGroup()
            for _ in 0..<pool.size { inside.enter() }
            onThreads(pool.size) { _ in
                _ = try? pool.withConnection { connection throws(StoreError) in
                    _ = try connection.query("SELECT 1")
                    inside.leave()
                    _ = inside.wait(timeout: .now() + 5)
                }
            }
        }
    }
}

/// Terminates every chatterd session on `database` (except the one asking) and waits until they are gone.
/// - Returns: how many were terminated.
func terminateBackends(of database: TestDatabase) throws(StoreError) -> Int {
    let admin = PGConnectionPool(conninfo: database.conninfo(), size: 1)
    defer { admin.close() }
    return try admin.withConnection { connection throws(StoreError) in
        let killed = try connection.query(Backends.terminateSQL)
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline, try connection.query(Backends.countSQL).string(row: 0, column: 0) != "0" {
            Thread.sleep(forTimeInterval: 0.01)
        }
        return Int(killed.string(row: 0, column: 0) ?? "") ?? -1
    }
}

private enum Backends {
    static let terminateSQL = """
        SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'chatterd' AND pid <> pg_backend_pid()
        """
    static let countSQL = """
        SELECT count(*) FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'chatterd' AND pid <> pg_backend_pid()
        """
}

extension DatabaseTests {
    /// A server that cannot take writes (a hot standby, or a primary made read-only) must give 503s and never
    /// keep chatterd's connections: after a failover, a new connection is what reaches the new primary.
    @Suite struct ReadOnlySessionTests {
        @Test func aSessionFoundReadOnlyIsUnavailableAndNotLentAgain() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(size: 1)
                defer { pool.close() }
                let repository = PostgresChattRepository(pool: pool)
                // The pooled session turns read-only, as every session does when its server is made read-only.
                try pool.withConnection { connection throws(StoreError) in
                    _ = try connection.query("SET default_transaction_read_only = on")
                }
                #expect(pool.stats.idle == 1)
                let chatt = NewChatt(name: "r", message: "o")
                let error = caught { () throws(RepositoryError) in try repository.add(chatt) }
                #expect(error?.kind == .unavailable, "\(String(describing: error))")
                #expect(pool.stats == PGConnectionPool.Stats(size: 1, inUse: 0, idle: 0), "read-only session kept")
                try repository.add(NewChatt(name: "w", message: "stored"))
                #expect(try repository.all().map(\.name) == ["w"])
            }
        }

        @Test func aReadOnlyServerIsRefusedAtConnectUnlessTheURLAcceptsAnySession() throws {
            try TestDatabase.with { database throws in
                let readOnly = ["options": "-c default_transaction_read_only=on"]
                let pool = database.pool(extra: readOnly)
                defer { pool.close() }
                let error = caught { () throws(StoreError) in try pool.withConnection { _ in } }
                #expect(error?.code == .connectFailed, "\(String(describing: error))")
                #expect(error?.repositoryError.kind == .unavailable)

                var lenientSettings = readOnly
                lenientSettings["target_session_attrs"] = "any"
                let lenient = database.pool(extra: lenientSettings)
                defer { lenient.close() }
                let repository = PostgresChattRepository(pool: lenient)
                try repository.ping()
                let chatt = NewChatt(name: "r", message: "o")
                let refused = caught { () throws(RepositoryError) in try repository.add(chatt) }
                #expect(refused?.kind == .unavailable)
                #expect(try database.column("SELECT count(*) FROM chatts") == ["0"])
            }
        }
    }
}
