import ChattAPI
import Testing
@testable import ChattStore

extension DatabaseTests {
    /// Through a transaction-mode pooler a named statement may be missing on the server connection that runs it,
    /// so a pool told its URL may lead to one must leave no prepared statement in any session.
    @Suite struct UnnamedStatementTests {
        static let preparedSQL = "SELECT count(*)::text FROM pg_prepared_statements"

        /// How many statements the pool's only session holds prepared after a single and a batch insert.
        private func preparedAfterInserts(preparesStatements: Bool) throws -> [String?] {
            try TestDatabase.with { database throws in
                let pool = PGConnectionPool(conninfo: database.conninfo(), size: 1, preparesStatements: preparesStatements)
                defer { pool.close() }
                let repository = PostgresChattRepository(pool: pool)
                try repository.add(NewChatt(name: "one", message: "alone"))
                // A refused row makes the batch retry row by row, which uses the other statement.
                let batch = [NewChatt(name: "ok", message: "kept"), NewChatt(name: String(repeating: "n", count: 40), message: "x")]
                onThreads(batch.count) { index in _ = try? repository.add(batch[index]) }
                #expect(try repository.all().map(\.name).contains("ok"))
                return try pool.withConnection { connection throws(StoreError) in
                    let result = try connection.query(Self.preparedSQL)
                    return [result.string(row: 0, column: 0)]
                }
            }
        }

        @Test func aPoolThatDoesNotPrepareLeavesNoStatementInItsSession() throws {
            #expect(try preparedAfterInserts(preparesStatements: false) == ["0"])
        }

        @Test func aDirectPoolKeepsItsInsertPrepared() throws {
            let prepared = try preparedAfterInserts(preparesStatements: true)
            #expect(prepared == ["1"] || prepared == ["2"], "\(prepared)")
        }
    }
}
