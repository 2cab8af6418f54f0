import ChattModel
@testable import ChattStore
import Foundation
import Testing

extension DatabaseTests {
    /// The change log of migrations/0006 against a real server: a tick holds the chatts of the commits its snapshot
    /// was the first to see, whoever wrote them; an open transaction holds back only its own; the epoch moves with
    /// every edit and with nothing else; the log is read, and the store read in full, at any position.
    @Suite struct SnapshotTickTests {
        /// Runs `body` with a repository on a fresh, migrated database.
        func withRepository(_ body: (PostgresChattRepository, TestDatabase) async throws -> Void) async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool()
                defer { pool.close() }
                try await body(PostgresChattRepository(pool: pool), database)
            }
        }

        /// The messages of every tick after `tick` (whole), in log order, tick by tick.
        func messages(
            after tick: LogTick, in repository: PostgresChattRepository
        ) async throws -> [[String]] {
            let read = try await repository.log(after: tick.position(), limit: 1000, before: .soon)
            #expect(read.ticks.first?.tick == tick)
            return read.ticks.dropFirst().map { $0.chatts.map(\.chatt.message) }
        }

        @Test func aTransactionOpenAcrossTicksHoldsBackOnlyItsOwnRows() async throws {
            try await withRepository { repository, database throws in
                let first = try await repository.tick(before: .soon)
                // As psql would: a transaction of its own, open across chatterd's post and a tick.
                let psql = try TestDatabase.plainConnection(database.conninfo())
                _ = try psql.query("BEGIN")
                _ = try psql.query("INSERT INTO chatts (name, message) VALUES ('psql', 'began first')")
                try await repository.add(NewChatt(name: "n", message: "committed first"))
                let second = try await repository.tick(before: .soon)
                #expect(second.tick == first.tick + 1 && second.epoch == first.epoch)
                #expect(try await messages(after: first, in: repository) == [["committed first"]])
                _ = try psql.query("COMMIT")
                let third = try await repository.tick(before: .soon)
                #expect(try await messages(after: first, in: repository) == [["committed first"], ["began first"]])
                #expect(third.epoch == first.epoch, "inserts leave the epoch alone")
                // Feed order is by time: the psql row's statement began first.
                #expect(try await repository.all().map(\.message) == ["began first", "committed first"])
            }
        }

        @Test func aTickAndAReadOfTheLogUseTheXidIndexWhateverItsStatisticsSay() async throws {
            try await withRepository { repository, database throws in
                // One transaction wrote nearly every row, as a bulk load or the migration of an older store does: the
                // statistics then make a lookup of a few xids look like one of the whole table.
                _ = try database.column(
                    "INSERT INTO chatts (name, message) SELECT 'bulk', 'row ' || i FROM generate_series(1, 20000) AS i")
                _ = try database.column("ANALYZE chatts")
                let before = try await repository.tick(before: .soon)
                try await repository.add(NewChatt(name: "n", message: "new"))
                let psql = try TestDatabase.plainConnection(database.conninfo())
                _ = try psql.query("BEGIN")
                let tick = try psql.query(
                    "SELECT tick FROM chatts_events_after($1::bigint, $2::bigint, 100)",
                    [String(before.tick), String(LogPosition.wholeTick)])
                _ = try psql.query("SELECT * FROM chatts_events($1::bigint, $2::bigint, 100)", [String(before.tick), "0"])
                // This transaction's own counts, before they are flushed to the server's statistics.
                let scans = try psql.query(
                    "SELECT seq_scan, idx_tup_fetch FROM pg_stat_xact_user_tables WHERE relname = 'chatts'")
                _ = try psql.query("COMMIT")
                #expect(tick.rowCount == 2, "the tick before and the new one, with its chatt")
                #expect(scans.string(row: 0, column: 0) == "0", "no sequential scan of chatts")
                // Nor a walk of the seq index that fetches every row to find the new one (migrations/0008): the
                // reads fetch the new chatt and the second one's page of 100 (without 0008, 40 103).
                let fetched = try #require(scans.string(row: 0, column: 1).flatMap { Int($0) })
                #expect(fetched < 1000, "\(fetched) rows fetched by index")
            }
        }

        @Test func aTickIsMadeOnlyWhenTheStoreHasSomethingNew() async throws {
            try await withRepository { repository, database throws in
                let first = try await repository.tick(before: .soon)
                #expect(try await repository.tick(before: .soon) == first)
                let psql = try TestDatabase.plainConnection(database.conninfo())
                _ = try psql.query("BEGIN")
                _ = try psql.query("INSERT INTO chatts (name, message) VALUES ('psql', 'dropped')")
                _ = try psql.query("ROLLBACK")
                _ = try database.column("UPDATE chatts SET message = 'x' WHERE false")
                #expect(try await repository.tick(before: .soon) == first, "a rollback and an empty edit are nothing")
                try await repository.add(NewChatt(name: "n", message: "kept"))
                let second = try await repository.tick(before: .soon)
                #expect(second.tick == first.tick + 1 && second.token != first.token)
                #expect(try await messages(after: first, in: repository) == [["kept"]])
            }
        }

        @Test func everyEditMovesTheEpochAtItsCommitAndNeitherPostsNorRemovalsDo() async throws {
            try await withRepository { repository, database throws in
                func epoch() async throws -> Int64 { try await repository.tick(before: .soon).epoch }
                let start = try await epoch()
                try await repository.add(NewChatt(name: "n", message: "a"))
                _ = try database.column("INSERT INTO chatts (name, message) VALUES ('psql', 'b')")
                #expect(try await epoch() == start)
                _ = try database.column("UPDATE chatts SET message = 'edited' WHERE message = 'a'")
                #expect(try await epoch() == start + 1)
                _ = try database.column("DELETE FROM chatts WHERE message = 'b'")
                #expect(try await epoch() == start + 1, "a removal is an event of the log")
                _ = try database.column("TRUNCATE chatts")
                #expect(try await epoch() == start + 2)
                // An open edit holds up no post; it moves the epoch once, at its commit, however many rows it
                // edits, and a transaction's edits of its own new rows, which nobody saw, move nothing.
                try await repository.add(NewChatt(name: "n", message: "c"))
                try await repository.add(NewChatt(name: "n", message: "d"))
                let psql = try TestDatabase.plainConnection(database.conninfo())
                _ = try psql.query("BEGIN")
                _ = try psql.query("UPDATE chatts SET message = message || '!' WHERE message IN ('c', 'd')")
                _ = try psql.query("INSERT INTO chatts (name, message) VALUES ('psql', 'mine')")
                _ = try psql.query("UPDATE chatts SET message = 'mine, edited' WHERE name = 'psql'")
                try await repository.add(NewChatt(name: "n", message: "while it is open"))
                #expect(try await epoch() == start + 2)
                _ = try psql.query("COMMIT")
                #expect(try await epoch() == start + 3)
                #expect(try await repository.all().map(\.message) == ["c!", "d!", "mine, edited", "while it is open"])
            }
        }

        @Test func aRemovalIsAnEventOfTheFirstTickAfterItsCommitWhoeverMadeItAndItsRecordSaysWhoAndWhy() async throws {
            try await withRepository { repository, database throws in
                let place = #"[1.5,2,"N","w"]"#
                for (message, geodata) in [("kept", nil), ("removed in psql", nil), ("removed by a moderator", place)] {
                    try await repository.add(NewChatt(name: "n", message: message, geodata: geodata))
                }
                let stored = try await repository.all()
                let first = try await repository.tick(before: .soon)
                let psql = try TestDatabase.plainConnection(database.conninfo())
                _ = try psql.query("BEGIN")
                _ = try psql.query("DELETE FROM chatts WHERE message = 'removed in psql'")
                // Open across a post and a tick: the removal waits for the first tick after its commit.
                try await repository.add(NewChatt(name: "n", message: "posted meanwhile"))
                let second = try await repository.tick(before: .soon)
                _ = try psql.query("COMMIT")
                let removed = try database.column(
                    "SELECT chatts_remove(id, 'alice', 'spam') FROM chatts WHERE message = 'removed by a moderator'")
                #expect(removed == ["t"])
                #expect(try database.column("SELECT chatts_remove($1::uuid, 'alice', 'again')", [stored[2].id]) == ["f"])
                // Posted and removed in one transaction: nobody saw it, so nothing to tell.
                _ = try psql.query("BEGIN")
                _ = try psql.query("INSERT INTO chatts (name, message) VALUES ('psql', 'never shown')")
                _ = try psql.query("DELETE FROM chatts WHERE message = 'never shown'")
                _ = try psql.query("COMMIT")
                let third = try await repository.tick(before: .soon)
                #expect(third.tick == second.tick + 1 && third.epoch == first.epoch)
                let read = try await repository.log(after: first.position(), limit: 100, before: .soon)
                #expect(read.ticks.map { $0.chatts.map(\.chatt.message) } == [[], ["posted meanwhile"], []])
                let removals = read.ticks.dropFirst().map { $0.removals.map(\.id) }
                #expect(removals == [[], [stored[1].id, stored[2].id]])
                let removal = try #require(read.ticks.last?.removals.first)
                #expect(removal.position.timestamp == stored[1].timestamp)
                #expect(read.ticks.last?.removals.map(\.geodata) == ["", place], "where each was (migrations/0009)")
                // A read that reached its limit ends at the last event read, removals included.
                let cut = try await repository.log(after: second.position(), limit: 2, before: .soon)
                let last = try #require(read.ticks.last?.removals.last)
                #expect(cut.isCut && cut.end == third.position(through: last.sequence))
                let role = try #require(try database.column("SELECT session_user").first ?? nil)
                let audit = try database.column(
                    "SELECT id || ' ' || removed_by || ' ' || coalesce(reason, '-') FROM chatts_removals ORDER BY seq")
                #expect(audit == ["\(stored[1].id) sql:\(role) -", "\(stored[2].id) alice spam"])
                #expect(try await repository.all().map(\.message) == ["kept", "posted meanwhile"])
            }
        }

        @Test func retentionRemovesTheOldestExpiredChattsABatchAtATimeAsRemovalsOfItsOwn() async throws {
            try await withRepository { repository, database throws in
                _ = try database.column("""
                    INSERT INTO chatts (name, message, time)
                    SELECT 'old', 'day ' || i, now() - make_interval(days => 30 - i) FROM generate_series(1, 5) AS i
                    """)
                try await repository.add(NewChatt(name: "n", message: "new"))
                let before = try await repository.tick(before: .soon)
                var counts: [Int] = []
                for _ in 0..<4 {
                    counts.append(try await repository.removeExpired(olderThanDays: 7, batch: 2, before: .soon))
                }
                #expect(counts == [2, 2, 1, 0])
                #expect(try await repository.all().map(\.message) == ["new"])
                let read = try await repository.log(after: before.position(), limit: 100, before: .soon)
                #expect(read.ticks.removals.count == 5 && read.ticks.chatts.isEmpty)
                let audit = try database.column("SELECT DISTINCT removed_by || ': ' || reason FROM chatts_removals")
                #expect(audit == ["retention: older than 7 days"])
            }
        }

        @Test func concurrentTickersAndWritersGiveEveryChattExactlyOneTick() async throws {
            try await withRepository { repository, database throws in
                let first = try await repository.tick(before: .soon)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<4 {
                        group.addTask {
                            for post in 0..<25 {
                                try await repository.add(NewChatt(name: "w\(writer)", message: "\(writer)-\(post)"))
                            }
                        }
                    }
                    for _ in 0..<2 {
                        group.addTask {
                            for _ in 0..<40 { _ = try await repository.tick(before: .soon) }
                        }
                    }
                    try await group.waitForAll()
                }
                _ = try await repository.tick(before: .soon)
                let read = try await repository.log(after: first.position(), limit: 10_000, before: .soon)
                let ticks = read.ticks.map(\.tick.tick)
                #expect(ticks == Array(ticks[0]...ticks[ticks.count - 1]), "ticks follow one another")
                let messages = read.ticks.chatts.map(\.chatt.message)
                #expect(messages.count == 100 && Set(messages).count == 100, "each chatt once")
                for writer in 0..<4 {
                    let own = messages.filter { $0.hasPrefix("\(writer)-") }
                    #expect(own == (0..<25).map { "\(writer)-\($0)" }, "one writer's chatts in its commit order")
                }
            }
        }

        @Test func theLogIsReadPageByPageFromAnyPositionAndTheStoreInFullAtIt() async throws {
            try await withRepository { repository, database throws in
                let first = try await repository.tick(before: .soon)
                _ = try database.column(
                    "INSERT INTO chatts (name, message) SELECT 'n', i::text FROM generate_series(1, 5) AS i")
                let second = try await repository.tick(before: .soon)
                try await repository.add(NewChatt(name: "n", message: "6"))
                let third = try await repository.tick(before: .soon)
                var position = first.position()
                var pages: [[String]] = []
                while true {
                    let page = try await repository.log(after: position, limit: 2, before: .soon)
                    pages.append(page.ticks.chatts.map(\.chatt.message))
                    // Invariant: a read from a tick the store has has an end.
                    position = page.end!
                    if !page.isCut { break }
                }
                // A page's last tick comes with as many of its events as the limit (its ties kept): the first
                // page's anchor tick, a row with nothing left to give, then two of the second tick's.
                #expect(pages == [["1", "2"], ["3", "4"], ["5", "6"], []])
                #expect(position == third.position())
                // Part of a tick: the store in full holds what the position holds, and the log goes on from there.
                let sequences = try database.column("SELECT seq::text FROM chatts ORDER BY seq").compactMap { $0 }
                let midway = second.position(through: Int64(sequences[2])!)
                var held: [String] = []
                #expect(try await repository.readChatts(at: midway, before: .soon) { held.append($0.chatt.message) })
                #expect(held == ["1", "2", "3"])
                let rest = try await repository.log(after: midway, limit: 100, before: .soon)
                #expect(rest.ticks.chatts.map(\.chatt.message) == ["4", "5", "6"] && !rest.isCut)
                // A position whose tick the store does not have (another token) is none of its own.
                let stranger = LogPosition(tick: second.tick, token: second.token ^ 1)
                #expect(!(try await repository.readChatts(at: stranger, before: .soon) { _ in }))
                let read = try await repository.log(after: stranger, limit: 100, before: .soon)
                #expect(read.ticks.first.map { !$0.tick.isTick(of: stranger) } ?? true)
                // A tick of many transactions is given whole, past the limit: each is looked up once.
                for index in 0..<70 {
                    _ = try database.column("INSERT INTO chatts (name, message) VALUES ('n', 'm\(index)')")
                }
                let many = try await repository.tick(before: .soon)
                let whole = try await repository.log(after: third.position(), limit: 10, before: .soon)
                #expect(whole.ticks.map(\.tick) == [third, many] && whole.ticks.chatts.count == 70 && whole.isCut)
            }
        }

        @Test func aTickAndAReadInOneStatementAgreeWithTheTwoApart() async throws {
            try await withRepository { repository, _ throws in
                let first = try await repository.tickAndRead(after: nil, limit: 10, before: .soon)
                let ticked = try await repository.tick(before: .soon)
                #expect(first.read.ticks.isEmpty && first.newest == ticked)
                try await repository.add(NewChatt(name: "n", message: "a"))
                try await repository.add(NewChatt(name: "n", message: "b"))
                let both = try await repository.tickAndRead(after: first.newest.position(), limit: 10, before: .soon)
                #expect(both.newest.tick > first.newest.tick)
                let apart = try await repository.log(after: first.newest.position(), limit: 10, before: .soon)
                #expect(both.read == apart)
                #expect(both.read.ticks.chatts.map(\.chatt.message) == ["a", "b"] && !both.read.isCut)
                // A position past what the store has: the newest tick comes all the same, first.
                let ahead = LogPosition(tick: both.newest.tick + 5, token: 1)
                let lost = try await repository.tickAndRead(after: ahead, limit: 10, before: .soon)
                #expect(lost.read.ticks.map(\.tick) == [lost.newest] && lost.newest == both.newest)
            }
        }

        @Test func aStoreFromAnotherTransactionIdSpaceStartsTheLogOverInANewEpoch() async throws {
            try await withRepository { repository, database throws in
                try await repository.add(NewChatt(name: "n", message: "kept"))
                let before = try await repository.tick(before: .soon)
                // As a dump restored into a younger cluster leaves it: the last tick saw transaction ids far ahead.
                _ = try database.column("UPDATE chatts_ticks SET snapshot = '4000000000:4000000000:'")
                let after = try await repository.tick(before: .soon)
                #expect(after.epoch == before.epoch + 1 && after.tick > before.tick)
                #expect(try database.column("SELECT count(*)::text FROM chatts_ticks") == ["1"])
                #expect(try database.column("SELECT DISTINCT xid::text FROM chatts") == ["2"], "where the log begins")
                #expect(try await repository.all().map(\.message) == ["kept"])
                try await repository.add(NewChatt(name: "n", message: "next"))
                _ = try await repository.tick(before: .soon)
                #expect(try await messages(after: after, in: repository) == [["next"]])
            }
        }

        @Test func everyThousandthTickPrunesTicksMoreThanTenThousandBack() async throws {
            try await withRepository { repository, database throws in
                let first = try await repository.tick(before: .soon)
                // Numbers jump as if 10 998 ticks had been made since.
                _ = try database.column("""
                    INSERT INTO chatts_ticks (tick, snapshot, xids, epoch, token)
                    SELECT 10999, snapshot, '{}', epoch, token + 1 FROM chatts_ticks WHERE tick = \(first.tick)
                    """)
                try await repository.add(NewChatt(name: "n", message: "m"))
                #expect(try await repository.tick(before: .soon).tick == 11000)
                #expect(try database.column("SELECT tick::text FROM chatts_ticks ORDER BY tick") == ["10999", "11000"])
            }
        }

        @Test func theMigrationPutsStoredChattsBeforeItsFirstTick() async throws {
            try await TestDatabase.with(migrated: false) { database throws in
                let conninfo = database.conninfo()
                let before = try Self.migrations(before: "0006")
                defer { try? FileManager.default.removeItem(atPath: before) }
                _ = try Migrator.migrate(conninfo: conninfo, directory: before)
                _ = try database.column(
                    "INSERT INTO chatts (name, message) SELECT 'n', i::text FROM generate_series(1, 3) AS i")
                _ = try Migrator.migrate(conninfo: conninfo, directory: TestDatabase.migrationsDirectory)
                let pool = database.pool()
                defer { pool.close() }
                let repository = PostgresChattRepository(pool: pool)
                let first = try await repository.tick(before: .soon)
                #expect(first.tick == 1)
                #expect(try await repository.all().map(\.message) == ["1", "2", "3"])
                #expect(try await messages(after: first, in: repository) == [])
                // An insert through 0005's numbered statement, as an older chatterd mid-upgrade would send it,
                // still works, and lands in the log like any other.
                _ = try database.column("""
                    WITH clock AS (UPDATE chatts_clock SET last = last + 1 RETURNING last)
                    INSERT INTO chatts (name, message, position) SELECT 'old', 'chatterd', last FROM clock
                    """)
                _ = try await repository.tick(before: .soon)
                #expect(try await messages(after: first, in: repository) == [["chatterd"]])
            }
        }

        /// A copy of the migrations before `version`, so a database can stand where one did before it.
        static func migrations(before version: String) throws -> String {
            let directory = FileManager.default.temporaryDirectory
                .appending(path: "chatterd-before-\(version)-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let source = URL(filePath: TestDatabase.migrationsDirectory)
            for name in try FileManager.default.contentsOfDirectory(atPath: source.path)
            where name.hasSuffix(".sql") && name < version {
                try FileManager.default.copyItem(at: source.appending(path: name), to: directory.appending(path: name))
            }
            return directory.path
        }
    }
}
