import ChattAPI
import Testing
@testable import ChattStore

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
                let error = caught { () throws(RepositoryError) in try repository.add(NewChatt(name: "r", message: "o")) }
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
                let refused = caught { () throws(RepositoryError) in try repository.add(NewChatt(name: "r", message: "o")) }
                #expect(refused?.kind == .unavailable)
                #expect(try database.column("SELECT count(*) FROM chatts") == ["0"])
            }
        }
    }
}
