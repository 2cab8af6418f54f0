import ChattModel
@testable import ChattStore
import Foundation
import Testing

extension DatabaseTests {
    /// Commit positions (migrations/0005) against a real server: numbered in commit order, whoever writes, and an
    /// epoch that moves with every edit and with nothing else.
    @Suite struct CommitOrderTests {
        /// Runs `body` with a repository on a fresh, migrated database.
        func withRepository(_ body: (PostgresChattRepository, TestDatabase) async throws -> Void) async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool()
                defer { pool.close() }
                try await body(PostgresChattRepository(pool: pool), database)
            }
        }

        @Test func aTransactionThatBeganFirstButCommittedLaterIsNumberedLater() async throws {
            try await withRepository { repository, database throws in
                let listener = try TestDatabase.plainConnection(database.conninfo())
                _ = try listener.query("LISTEN chatts_changed")
                // As psql would: a transaction of its own, open across chatterd's post.
                let psql = try TestDatabase.plainConnection(database.conninfo())
                _ = try psql.query("BEGIN")
                _ = try psql.query("INSERT INTO chatts (name, message) VALUES ('psql', 'began first')")
                let batch = try await repository.add(NewChatt(name: "n", message: "committed first"))
                #expect(batch.position == CommitPosition(epoch: 1, count: 1) && batch.previous == 0)
                #expect(batch.chatts.map(\.commit) == [1], "the open transaction blocked nobody")
                _ = try psql.query("COMMIT")

                let committed = try await repository.committed(after: 0, limit: 10, before: .soon)
                #expect(committed.chatts.map(\.chatt.message) == ["committed first", "began first"])
                #expect(committed.chatts.map(\.commit) == [1, 2])
                #expect(committed.position == CommitPosition(epoch: 1, count: 2), "numbering left the epoch alone")
                // Feed order is by time: the psql row's statement began first.
                #expect(try await repository.all().map(\.message) == ["began first", "committed first"])
                let later = try await repository.committed(after: 1, limit: 10, before: .soon)
                #expect(later.chatts.map(\.chatt.message) == ["began first"])
                let first = try await repository.committed(after: 0, limit: 1, before: .soon)
                #expect(first.chatts.map(\.commit) == [1] && first.position.count == 2)

                // Notifications arrive in commit order: the marker comes after everything the insert sent.
                _ = try psql.query("NOTIFY chatts_changed, 'marker'")
                var payloads: [String] = []
                #expect(await waitUntil {
                    _ = try? listener.query("SELECT 1")
                    payloads += listener.takeNotifications()
                    return payloads.contains("marker")
                })
                let others = payloads.filter { !$0.hasPrefix(ChattsChangedNotice.insertWord + " ") }
                #expect(others == ["insert", "marker"], "the numbering UPDATE announced no edit")
            }
        }

        @Test func everyEditMovesTheEpochAndNothingElseDoes() async throws {
            try await withRepository { repository, database throws in
                func position() async throws -> CommitPosition {
                    let committed = try await repository.committed(after: 0, limit: 1, before: .soon).position
                    // Every read that names a version names the clock of its own snapshot.
                    #expect(try await repository.version(before: .soon).position == committed)
                    #expect(try await repository.fullRead().version.position == committed)
                    let delta = try await repository.chatts(after: nil, limit: 1, before: .soon)
                    #expect(delta.version.position == committed)
                    return committed
                }
                #expect(try await position() == CommitPosition(epoch: 1, count: 0))
                try await repository.add(NewChatt(name: "n", message: "a"))
                _ = try database.column("INSERT INTO chatts (name, message) VALUES ('psql', 'b')")
                #expect(try await position() == CommitPosition(epoch: 1, count: 2), "inserts only count")
                _ = try database.column("UPDATE chatts SET message = 'edited' WHERE message = 'a'")
                #expect(try await position() == CommitPosition(epoch: 2, count: 2))
                _ = try database.column("DELETE FROM chatts WHERE message = 'b'")
                #expect(try await position() == CommitPosition(epoch: 3, count: 2))
                let batch = try await repository.add(NewChatt(name: "n", message: "c"))
                #expect(batch.position == CommitPosition(epoch: 3, count: 3) && batch.previous == 2)
                _ = try database.column("TRUNCATE chatts")
                #expect(try await position() == CommitPosition(epoch: 4, count: 3))
                // A row set back to NULL is numbered again at commit, after everything before it.
                try await repository.add(NewChatt(name: "n", message: "d"))
                _ = try database.column("UPDATE chatts SET position = NULL")
                #expect(try database.column("SELECT position::text FROM chatts") == ["5"])
                #expect(try await position() == CommitPosition(epoch: 5, count: 5))
            }
        }

        @Test func anOpenEditHoldsUpNoPostAndMovesTheEpochAtItsCommit() async throws {
            try await withRepository { repository, database throws in
                try await repository.add(NewChatt(name: "n", message: "spam"))
                let psql = try TestDatabase.plainConnection(database.conninfo())
                _ = try psql.query("BEGIN")
                _ = try psql.query("DELETE FROM chatts WHERE message = 'spam'")
                _ = try psql.query("INSERT INTO chatts (name, message) VALUES ('psql', 'mine')")
                // Its own new row, edited before anyone saw it: no edit to tell anyone of.
                _ = try psql.query("UPDATE chatts SET message = 'mine, edited' WHERE name = 'psql'")
                let batch = try await repository.add(NewChatt(name: "n", message: "while it is open"))
                #expect(batch.position == CommitPosition(epoch: 1, count: 2), "the open transaction held up nobody")
                _ = try psql.query("COMMIT")
                let committed = try await repository.committed(after: 0, limit: 10, before: .soon)
                #expect(committed.position == CommitPosition(epoch: 2, count: 3), "one edit, one epoch")
                #expect(committed.chatts.map(\.chatt.message) == ["while it is open", "mine, edited"])
                // An edit that matched nothing changed nothing anyone saw.
                _ = try database.column("UPDATE chatts SET message = 'x' WHERE false")
                #expect(try await repository.version(before: .soon).position == committed.position)
            }
        }

        @Test func aRolledBackInsertGivesItsNumberBack() async throws {
            try await withRepository { repository, database throws in
                let psql = try TestDatabase.plainConnection(database.conninfo())
                _ = try psql.query("BEGIN")
                _ = try psql.query("INSERT INTO chatts (name, message) VALUES ('psql', 'dropped')")
                _ = try psql.query("ROLLBACK")
                let refused = await caughtAsync { () async throws(RepositoryError) in
                    try await repository.add(NewChatt(name: "", message: "refused by the table"))
                }
                #expect(refused?.kind == .rejected)
                let batch = try await repository.add(NewChatt(name: "n", message: "kept"))
                #expect(batch.chatts.map(\.commit) == [1], "dense: nothing taken by what did not commit")
            }
        }

        @Test func theMigrationNumbersExistingRowsInSequenceOrder() async throws {
            try await TestDatabase.with(migrated: false) { database throws in
                let conninfo = database.conninfo()
                let before = try Self.migrationsBefore0005()
                defer { try? FileManager.default.removeItem(atPath: before) }
                _ = try Migrator.migrate(conninfo: conninfo, directory: before)
                _ = try database.column(
                    "INSERT INTO chatts (name, message) SELECT 'n', i::text FROM generate_series(1, 5) AS i")
                _ = try database.column("DELETE FROM chatts WHERE message = '2'")
                _ = try Migrator.migrate(conninfo: conninfo, directory: TestDatabase.migrationsDirectory)
                #expect(try database.column("SELECT position::text FROM chatts ORDER BY seq") == ["1", "2", "3", "4"])
                #expect(try database.column("SELECT epoch || '-' || last FROM chatts_clock") == ["1-4"])
            }
        }

        /// A copy of the migrations before 0005, so a database can stand where one did before it.
        static func migrationsBefore0005() throws -> String {
            let directory = FileManager.default.temporaryDirectory.appending(path: "chatterd-before-0005-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let source = URL(filePath: TestDatabase.migrationsDirectory)
            for name in try FileManager.default.contentsOfDirectory(atPath: source.path)
            where name.hasSuffix(".sql") && name < "0005" {
                try FileManager.default.copyItem(at: source.appending(path: name), to: directory.appending(path: name))
            }
            return directory.path
        }
    }
}
