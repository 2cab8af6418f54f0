import ChattModel
@testable import ChattStore
import Foundation
import Locking
import Testing

extension DatabaseTests {
    @Suite struct RepositoryTests {
        static var uuidPattern: Regex<Substring> { /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/ }
        static var timestampPattern: Regex<Substring> { /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/ }

        /// Runs `body` with a repository on a fresh, migrated database.
        func withRepository(
            extra: [String: String] = [:], _ body: (PostgresChattRepository, TestDatabase) async throws -> Void
        ) async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(extra: extra)
                defer { pool.close() }
                try await body(PostgresChattRepository(pool: pool), database)
            }
        }

        @Test func emptyStoreHasNoChatts() async throws {
            try await withRepository { repository, _ throws in
                try await repository.ping(before: .soon)
                #expect(try await repository.all() == [])
            }
        }

        @Test func everyPostIsInTheNextTickAndTheCommitObserverHearsOfIt() async throws {
            try await withRepository { repository, _ throws in
                let heard = Locked(0)
                repository.observeCommits { heard.withLock { $0 += 1 } }
                let empty = try await repository.tick(before: .soon)
                try await repository.add(NewChatt(name: "a", message: "1"))
                #expect(heard.withLock { $0 } == 1)
                let one = try await repository.tick(before: .soon)
                #expect(one.tick == empty.tick + 1 && one.epoch == empty.epoch)
                #expect(try await repository.fullRead().chatts.map(\.message) == ["1"])
                try await repository.add(NewChatt(name: "b", message: "2"))
                let read = try await repository.log(after: one.position(), limit: 10, before: .soon)
                #expect(read.ticks.map(\.tick) == [one], "not in a tick until one is made")
                let two = try await repository.tick(before: .soon)
                #expect(try await repository.log(after: one.position(), limit: 10, before: .soon).ticks.map(\.tick)
                    == [one, two])
            }
        }

        @Test func addedChattsComeBackInWireForm() async throws {
            // A session time zone far from UTC proves the timestamp is rendered in UTC regardless.
            try await withRepository(extra: ["options": "-c TimeZone=Asia/Kathmandu"]) { repository, database throws in
                let geodata = #"[42.2936,-83.7166,"North","walking"]"#
                try await repository.add(NewChatt(name: "alice", message: "hi", geodata: geodata))
                try await repository.add(NewChatt(name: "bob", message: "no location", geodata: nil))
                let chatts = try await repository.all()
                try #require(chatts.count == 2)
                #expect(chatts.map(\.name) == ["alice", "bob"])
                #expect(chatts.map(\.message) == ["hi", "no location"])
                #expect(chatts.map(\.geodata) == [geodata, nil])
                for chatt in chatts {
                    #expect(chatt.id.wholeMatch(of: Self.uuidPattern) != nil, "\(chatt.id)")
                    #expect(chatt.timestamp.wholeMatch(of: Self.timestampPattern) != nil, "\(chatt.timestamp)")
                    // The server reads the wire timestamp back as exactly the stored instant.
                    let same = try database.column(
                        "SELECT ($1::timestamptz = time)::text FROM chatts WHERE id = $2::uuid",
                        [chatt.timestamp, chatt.id])
                    #expect(same == ["true"])
                }
            }
        }

        @Test(arguments: [
            #"[42.2936,-83.7166,"North","walking"]"#,
            " [ 1.5e1 ,\t-0.0 , \"Nörd 🧭\" , \"\\u00e9\" ] ",
            "\r\n[0,0,\"\",\"\"]\n",
            "[0,0,\"e\u{301}\",\"\u{e9}\"]",
            "[0,0,\"👨‍👩‍👧‍👦\",\"\u{200B}\u{FEFF}\"]",
        ])
        func geodataIsStoredByteForByte(geodata: String) async throws {
            try await withRepository { repository, _ throws in
                try await repository.add(NewChatt(name: "g", message: "", geodata: geodata))
                let stored = try #require(try await repository.all().first?.geodata)
                // Compare bytes: String == treats canonically equivalent forms (é vs e + U+0301) as equal.
                #expect(Array(stored.utf8) == Array(geodata.utf8))
            }
        }

        @Test func lengthsCountUnicodeScalars() async throws {
            let family = "👨‍👩‍👧‍👦"  // 7 scalars, 1 Character
            let name32 = String(repeating: family, count: 4) + "\u{e9}\u{e9}\u{e9}\u{e9}"
            let decomposed32 = String(repeating: "e\u{301}", count: 16)  // 16 Characters, 32 scalars
            try await withRepository { repository, _ throws in
                for name in [name32, decomposed32] {
                    #expect(name.unicodeScalars.count == 32)
                    try await repository.add(NewChatt(name: name, message: String(repeating: "ü", count: 255)))
                }
                let stored = try await repository.all()
                #expect(stored.map { Array($0.name.utf8) } == [Array(name32.utf8), Array(decomposed32.utf8)])

                let rejected = [
                    NewChatt(name: name32 + "x", message: ""),
                    NewChatt(name: decomposed32 + "\u{301}", message: ""),
                    NewChatt(name: "m", message: String(repeating: "ü", count: 256)),
                    NewChatt(name: "g", message: "", geodata: String(repeating: "9", count: 256)),
                ]
                for chatt in rejected {
                    #expect(await caughtAsync { () async throws(RepositoryError) in try await repository.add(chatt) }?
                        .kind == .rejected)
                }
                #expect(try await repository.all().count == 2)
            }
        }

        @Test func overlongOrEmptyNameIsRejectedByTheDatabase() async throws {
            try await withRepository { repository, _ throws in
                let tooLong = await caughtAsync { () async throws(RepositoryError) in
                    try await repository.add(NewChatt(name: String(repeating: "a", count: 33), message: "m"))
                }
                #expect(tooLong?.kind == .rejected)
                let empty = await caughtAsync { () async throws(RepositoryError) in
                    try await repository.add(NewChatt(name: "", message: "m"))
                }
                #expect(empty?.kind == .rejected)
                #expect(try await repository.all() == [])
            }
        }

        @Test func nulIsRejectedInsteadOfTruncated() async throws {
            try await withRepository { repository, _ throws in
                let error = await caughtAsync { () async throws(RepositoryError) in
                    try await repository.add(NewChatt(name: "a\u{0}b", message: "m"))
                }
                #expect(error?.kind == .rejected)
                #expect(try await repository.all() == [])
            }
        }

        @Test func injectionLookingStringsAreStoredAsData() async throws {
            let payloads = [
                "x'); DROP TABLE chatts; --", "$1", "\\", "' OR '1'='1", "\"; SELECT pg_sleep(10); --", "%s%n",
            ]
            try await withRepository { repository, _ throws in
                for payload in payloads {
                    let chatt = NewChatt(name: String(payload.prefix(32)), message: payload, geodata: payload)
                    try await repository.add(chatt)
                }
                let stored = try await repository.all()
                #expect(stored.map(\.message) == payloads)
                #expect(stored.map(\.geodata) == payloads)
            }
        }

        @Test func postingOrderHoldsForManyQuickInserts() async throws {
            try await withRepository { repository, _ throws in
                for index in 0..<300 {
                    try await repository.add(NewChatt(name: "n", message: "\(index)"))
                }
                let stored = try await repository.all()
                #expect(stored.map(\.message) == (0..<300).map { "\($0)" })
                #expect(stored.map(\.timestamp) == stored.map(\.timestamp).sorted())
            }
        }

        @Test func concurrentAddsAreEachStoredExactlyOnce() async throws {
            try await withRepository { repository, _ throws in
                let failures = await concurrently(20) { poster in
                    var failures: [RepositoryError] = []
                    for index in 0..<10 {
                        let chatt = NewChatt(name: "t\(poster)", message: "\(poster)-\(index)")
                        let error = await caughtAsync { () async throws(RepositoryError) in
                            try await repository.add(chatt)
                        }
                        if let error { failures.append(error) }
                    }
                    return failures
                }
                #expect(failures.flatMap { $0 } == [])
                let stored = try await repository.all()
                #expect(stored.count == 200)
                let expected = Set((0..<20).flatMap { thread in (0..<10).map { "\(thread)-\($0)" } })
                #expect(Set(stored.map(\.message)) == expected)
                #expect(Set(stored.map(\.id)).count == 200)
                // Oldest first even when concurrent inserts take sequence numbers and timestamps in different orders
                // (fixed-width UTC timestamps compare correctly as strings).
                let timestamps = stored.map(\.timestamp)
                #expect(timestamps == timestamps.sorted())
            }
        }
    }
}

extension DatabaseTests {
    /// Through a transaction-mode pooler a named statement may be missing on the server connection that runs it,
    /// so a pool told its URL may lead to one must leave no prepared statement in any session.
    @Suite struct UnnamedStatementTests {
        static let preparedSQL = "SELECT count(*)::text FROM pg_prepared_statements"

        /// How many statements the pool's only session holds prepared after a single and a batch insert.
        private func preparedAfterInserts(preparesStatements: Bool) async throws -> [String?] {
            try await TestDatabase.with { database throws in
                let pool = PGConnectionPool(
                    conninfo: database.conninfo(), size: 1, preparesStatements: preparesStatements)
                defer { pool.close() }
                let repository = PostgresChattRepository(pool: pool)
                try await repository.add(NewChatt(name: "one", message: "alone"))
                // A refused row makes the batch retry row by row, which uses the other statement.
                let batch = [
                    NewChatt(name: "ok", message: "kept"), NewChatt(name: String(repeating: "n", count: 40), message: "x"),
                ]
                _ = await concurrently(batch.count) { index in try? await repository.add(batch[index]) }
                #expect(try await repository.all().map(\.name).contains("ok"))
                return try await pool.withSession(before: .soon) { session throws(StoreError) in
                    let result = try await session.query(Self.preparedSQL)
                    return [result.string(row: 0, column: 0)]
                }
            }
        }

        @Test func aPoolThatDoesNotPrepareLeavesNoStatementInItsSession() async throws {
            #expect(try await preparedAfterInserts(preparesStatements: false) == ["0"])
        }

        @Test func aDirectPoolKeepsItsInsertPrepared() async throws {
            let prepared = try await preparedAfterInserts(preparesStatements: true)
            #expect(prepared == ["1"] || prepared == ["2"], "\(prepared)")
        }
    }
}
