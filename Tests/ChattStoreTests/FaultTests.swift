import ChattModel
@testable import ChattStore
import Foundation
import Locking
import Testing

extension DatabaseTests {
    @Suite struct FaultTests {
        @Test func everyConnectionCarriesTheTimeoutsAndKeepsOperatorOptions() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(extra: ["options": "-c TimeZone=Asia/Kathmandu"])
                defer { pool.close() }
                let settings = try await pool.withSession(before: .soon) { session throws(StoreError) in
                    let result = try await session.query(Self.settingsSQL)
                    return (0..<4).map { result.string(row: 0, column: $0) }
                }
                #expect(settings == ["5s", "10s", "chatterd", "Asia/Kathmandu"])
            }
        }

        static let settingsSQL = """
            SELECT current_setting('statement_timeout'), current_setting('idle_in_transaction_session_timeout'),
                   current_setting('application_name'), current_setting('TimeZone')
            """

        @Test func statementTimeoutIsUnavailable() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(statementTimeout: .milliseconds(300))
                defer { pool.close() }
                let repository = PostgresChattRepository(pool: pool)
                let locker = try await ConnectionHolder.lockingChatts(in: database)
                defer { locker.letGo() }
                let chatt = NewChatt(name: "a", message: "b")
                var error: RepositoryError?
                let elapsed = await seconds {
                    error = await caughtAsync { () async throws(RepositoryError) in try await repository.add(chatt) }
                }
                #expect(error?.kind == .unavailable)
                // The statement timeout (57014 below) ended it, so not before 300 ms; a loaded machine only adds.
                #expect(elapsed > 0.25, "\(elapsed) s")
                let raw = await caughtAsync { () async throws(StoreError) in
                    try await pool.withSession(before: .soon) { session throws(StoreError) in
                        _ = try await session.query("SELECT count(*) FROM chatts")
                    }
                }
                #expect(raw?.sqlState == "57014")
                await locker.release()
                try await repository.add(NewChatt(name: "c", message: "d"))
                #expect(try await repository.all().map(\.name) == ["c"])
            }
        }

        @Test func poolExhaustionIsUnavailableAfterTheAcquireTimeout() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .milliseconds(300))
                defer { pool.close() }
                let holder = ConnectionHolder(pool)
                defer { holder.letGo() }
                try #require(await holder.waitUntilHeld())
                #expect(pool.stats == PGConnectionPool.Stats(size: 1, inUse: 1, idle: 0))
                var error: StoreError?
                let elapsed = await seconds {
                    error = await caughtAsync { () async throws(StoreError) in
                        try await pool.withSession(before: .soon) { _ throws(StoreError) in }
                    }
                }
                #expect(error?.code == .poolTimeout)
                #expect(error?.repositoryError.kind == .unavailable)
                // The acquire timeout ended it, so not before 300 ms; a loaded machine only adds.
                #expect(elapsed > 0.25, "\(elapsed) s")
                await holder.release()
                try await PostgresChattRepository(pool: pool).ping(before: .soon)
                #expect(pool.stats == PGConnectionPool.Stats(size: 1, inUse: 0, idle: 1))
            }
        }

        @Test func recoversAfterTheServerKillsEveryPooledConnection() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 4)
                defer { pool.close() }
                let repository = PostgresChattRepository(pool: pool)
                await openEveryConnection(of: pool)
                #expect(pool.stats.idle == 4)
                #expect(try terminateBackends(of: database) == 4)

                var failures: [RepositoryError] = []
                while failures.count < 2,
                    let error = await caughtAsync({ () async throws(RepositoryError) in
                        try await repository.ping(before: .soon)
                    })
                {
                    failures.append(error)
                }
                #expect(failures.count <= 1, "\(failures)")
                // The other dead connections are noticed on checkout, not by failing callers.
                let later = await concurrently(8) { _ in
                    await caughtAsync { () async throws(RepositoryError) in try await repository.ping(before: .soon) }
                }
                #expect(later.compactMap { $0 } == [])
                try await repository.add(NewChatt(name: "after", message: "restart"))
                #expect(try await repository.all().map(\.name) == ["after"])
            }
        }

        @Test func connectionLostMidCallIsUnavailableAndDiscarded() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1)
                defer { pool.close() }
                let error = await caughtAsync { () async throws(StoreError) in
                    try await pool.withSession(before: .soon) { session throws(StoreError) in
                        _ = try await session.query("SELECT 1")
                        _ = try terminateBackends(of: database)
                        _ = try await session.query(ChattBatchInsert.rowStatement.sql, ["a", "b", nil])
                    }
                }
                // Read as the socket allows, the server's goodbye (admin_shutdown) may come before its end-of-file.
                #expect(error?.code == .connectionLost || error?.sqlState == "57P01", "\(String(describing: error))")
                #expect(error?.repositoryError.kind == .unavailable)
                #expect(pool.stats == PGConnectionPool.Stats(size: 1, inUse: 0, idle: 0))
                #expect(try await PostgresChattRepository(pool: pool).all() == [])
            }
        }

        @Test func closedPoolIsUnavailable() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool()
                let repository = PostgresChattRepository(pool: pool)
                try await repository.ping(before: .soon)
                pool.close()
                #expect(pool.stats.idle == 0)
                let error = await caughtAsync { () async throws(StoreError) in
                    try await pool.withSession(before: .soon) { _ throws(StoreError) in }
                }
                #expect(error?.code == .poolClosed)
                let refused = await caughtAsync { () async throws(RepositoryError) in
                    try await repository.ping(before: .soon)
                }
                #expect(refused?.kind == .unavailable)
            }
        }

        /// Makes the pool open all its connections by having `size` callers hold one at the same time.
        private func openEveryConnection(of pool: PGConnectionPool) async {
            let inside = Locked(0)
            let everyoneInside = Promise<Void>()
            _ = await concurrently(pool.size) { _ in
                _ = try? await pool.withSession(before: .soon) { session throws(StoreError) in
                    _ = try await session.query("SELECT 1")
                    if inside.withLock({ $0 += 1; return $0 }) == pool.size { everyoneInside.fulfil(()) }
                    _ = await everyoneInside.value(within: .seconds(5))
                }
            }
        }
    }
}

/// Terminates every chatterd session on `database` (except the one asking) and waits until they are gone.
/// - Returns: how many were terminated.
func terminateBackends(of database: TestDatabase) throws(StoreError) -> Int {
    let connection = try TestDatabase.plainConnection(database.conninfo())
    let killed = try connection.query(Backends.terminateSQL)
    let deadline = ContinuousClock.now + .seconds(5)
    while ContinuousClock.now < deadline, try connection.query(Backends.countSQL).string(row: 0, column: 0) != "0" {
        Thread.sleep(forTimeInterval: 0.01)
    }
    return Int(killed.string(row: 0, column: 0) ?? "") ?? -1
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
        @Test func aSessionFoundReadOnlyIsUnavailableAndNotLentAgain() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1)
                defer { pool.close() }
                let repository = PostgresChattRepository(pool: pool)
                // The pooled session turns read-only, as every session does when its server is made read-only.
                try await pool.withSession(before: .soon) { session throws(StoreError) in
                    _ = try await session.query("SET default_transaction_read_only = on")
                }
                #expect(pool.stats.idle == 1)
                let chatt = NewChatt(name: "r", message: "o")
                let error = await caughtAsync { () async throws(RepositoryError) in try await repository.add(chatt) }
                #expect(error?.kind == .unavailable, "\(String(describing: error))")
                #expect(pool.stats == PGConnectionPool.Stats(size: 1, inUse: 0, idle: 0), "read-only session kept")
                try await repository.add(NewChatt(name: "w", message: "stored"))
                #expect(try await repository.all().map(\.name) == ["w"])
            }
        }

        @Test func aReadOnlyServerIsRefusedAtConnectUnlessTheURLAcceptsAnySession() async throws {
            try await TestDatabase.with { database throws in
                let readOnly = ["options": "-c default_transaction_read_only=on"]
                let pool = database.pool(extra: readOnly)
                defer { pool.close() }
                let error = await caughtAsync { () async throws(StoreError) in
                    try await pool.withSession(before: .soon) { _ throws(StoreError) in }
                }
                #expect(error?.code == .connectFailed, "\(String(describing: error))")
                #expect(error?.repositoryError.kind == .unavailable)

                var lenientSettings = readOnly
                lenientSettings["target_session_attrs"] = "any"
                let lenient = database.pool(extra: lenientSettings)
                defer { lenient.close() }
                let repository = PostgresChattRepository(pool: lenient)
                try await repository.ping(before: .soon)
                let chatt = NewChatt(name: "r", message: "o")
                let refused = await caughtAsync { () async throws(RepositoryError) in try await repository.add(chatt) }
                #expect(refused?.kind == .unavailable)
                #expect(try database.column("SELECT count(*) FROM chatts") == ["0"])
            }
        }
    }
}
