@testable import ChattStore
import Foundation
import Locking
import TestSupport
import Testing

extension DatabaseTests {
    @Suite struct MigratorTests {
        let directory = TestDatabase.migrationsDirectory
        /// Every migration in migrations/, in order.
        let allVersions = ["0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008", "0009"]

        @Test func migrationsApplyAndAreRecorded() async throws {
            try await TestDatabase.with(migrated: false) { database throws in
                let applied = try Migrator.migrate(conninfo: database.conninfo(), directory: directory)
                #expect(applied == allVersions)
                let recorded = try database.column(
                    "SELECT version FROM schema_migrations WHERE applied_at IS NOT NULL ORDER BY version")
                #expect(recorded == applied.map { $0 })
                let columns = try database.column("""
                    SELECT column_name || ' ' || data_type || ' ' || is_nullable FROM information_schema.columns
                    WHERE table_name = 'chatts' ORDER BY ordinal_position
                    """)
                #expect(columns == [
                    "seq bigint NO", "id uuid NO", "name text NO", "message text NO",
                    "time timestamp with time zone NO", "geodata text YES", "position bigint YES", "xid xid8 NO",
                ])
            }
        }

        @Test func rerunningAppliesNothing() async throws {
            try await TestDatabase.with { database throws in
                let again = try Migrator.migrate(conninfo: database.conninfo(), directory: directory)
                #expect(again == [])
                #expect(try database.column("SELECT count(*) FROM schema_migrations") == ["\(allVersions.count)"])
            }
        }

        @Test func theMigratorsSessionIsLeftAsItWas() async throws {
            try await TestDatabase.with(migrated: false) { database throws in
                // Advisory locks of this database only: the other tests' migrators run beside this one.
                let connection = try TestDatabase.plainConnection(database.conninfo())
                let files = try MigrationFile.load(directory: directory)
                #expect(try Migrator.migrate(files, on: connection) == allVersions)
                let result = try connection.query("""
                    SELECT current_setting('statement_timeout'),
                           (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
                                AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))::text
                    """)
                #expect([result.string(row: 0, column: 0), result.string(row: 0, column: 1)] == ["5s", "0"])
            }
        }

        @Test func concurrentMigratorsApplyEachFileOnce() async throws {
            try await TestDatabase.with(migrated: false) { database throws in
                let outcomes = Locked<[Result<[String], StoreError>]>([])
                let conninfo = database.conninfo()
                let directory = directory
                let allVersions = allVersions
                onThreads(4) { _ in
                    let outcome = Result { () throws(StoreError) in
                        try Migrator.migrate(conninfo: conninfo, directory: directory)
                    }
                    outcomes.withLock { $0.append(outcome) }
                }.wait()
                let applied = try outcomes.withLock { try $0.map { try $0.get() } }
                #expect(applied.filter { $0 == allVersions }.count == 1)
                #expect(applied.filter { $0 == [] }.count == 3)
                #expect(try database.column("SELECT count(*) FROM schema_migrations") == ["\(allVersions.count)"])
            }
        }

        @Test func feedOrdersAreReadThroughIndexes() async throws {
            try await TestDatabase.with { database throws in
                _ = try database.column("""
                    INSERT INTO chatts (name, message) SELECT 'n', i::text FROM generate_series(1, 5000) AS i
                    """)
                _ = try database.column("ANALYZE chatts")
                let plan = try database.column("EXPLAIN SELECT name FROM chatts ORDER BY seq LIMIT 10")
                #expect(plan.contains { $0?.contains("Index Scan using chatts_seq_key") == true })
                let unique = try database.column("SELECT indexdef FROM pg_indexes WHERE indexname = 'chatts_seq_key'")
                #expect(unique == ["CREATE UNIQUE INDEX chatts_seq_key ON public.chatts USING btree (seq)"])
                let feed = try database.column("EXPLAIN SELECT name FROM chatts ORDER BY time, seq LIMIT 10")
                #expect(feed.contains { $0?.contains("Index Scan using chatts_time_seq_idx") == true })
            }
        }

        @Test func missingDirectoryIsNamed() async throws {
            try await TestDatabase.with(migrated: false) { database throws in
                let error = caught { () throws(StoreError) in
                    _ = try Migrator.migrate(
                        conninfo: database.conninfo(), directory: "/nonexistent/chatterd-migrations")
                }
                #expect(error?.code == .migrationsDirectoryMissing(path: "/nonexistent/chatterd-migrations"))
                #expect(error?.description.contains("/nonexistent/chatterd-migrations") == true)
            }
        }

        @Test func failingMigrationIsNamedAndLeavesNothingBehind() async throws {
            let scratch = try ScratchDirectory(copying: directory)
            defer { scratch.remove() }
            try scratch.write("0099_broken.sql", "CREATE TABLE half_done (x int);\nSELECT * FROM no_such_table;\n")
            try await TestDatabase.with(migrated: false) { database throws in
                let error = caught { () throws(StoreError) in
                    _ = try Migrator.migrate(conninfo: database.conninfo(), directory: scratch.path)
                }
                #expect(error?.code == .migrationFailed(file: "0099_broken.sql"))
                #expect(error?.sqlState == "42P01")
                #expect(error?.description == "migration 0099_broken.sql failed")
                #expect(try database.column("SELECT version FROM schema_migrations ORDER BY version") == allVersions)
                #expect(try database.column("SELECT to_regclass('half_done')::text") == [nil])

                try scratch.write("0099_broken.sql", "CREATE TABLE half_done (x int);\n")
                let applied = try Migrator.migrate(conninfo: database.conninfo(), directory: scratch.path)
                #expect(applied == ["0099"])
            }
        }

        @Test func fileThatCommitsByItselfIsRefused() async throws {
            let scratch = try ScratchDirectory(copying: directory)
            defer { scratch.remove() }
            try scratch.write("0099_commits.sql", "CREATE TABLE t (x int); COMMIT;")
            try await TestDatabase.with(migrated: false) { database throws in
                let error = caught { () throws(StoreError) in
                    _ = try Migrator.migrate(conninfo: database.conninfo(), directory: scratch.path)
                }
                #expect(error?.code == .migrationFailed(file: "0099_commits.sql"))
                #expect(try database.column("SELECT version FROM schema_migrations ORDER BY version") == allVersions)
            }
        }
    }
}
