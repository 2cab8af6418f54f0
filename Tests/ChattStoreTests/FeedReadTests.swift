import ChattModel
@testable import ChattStore
import Foundation
import Testing

extension DatabaseTests {
    /// What the feed and the streams read: the log's chatts exactly as a full read gives them, and a full read
    /// streamed past one fetch.
    @Suite struct FeedReadTests {
        func withRepository(_ body: (PostgresChattRepository, TestDatabase) async throws -> Void) async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool()
                defer { pool.close() }
                try await body(PostgresChattRepository(pool: pool), database)
            }
        }

        @Test func theLogGivesEveryPostAsAFullReadGivesIt() async throws {
            try await withRepository { repository, _ throws in
                let start = try await repository.tick(before: .soon)
                let posted = await concurrently(12) { poster in
                    let geodata = poster % 2 == 0 ? "[1,2,\"N\",\"w\"]" : nil
                    let chatt = NewChatt(name: "t\(poster)", message: "é \"\(poster)\"", geodata: geodata)
                    return (try? await repository.add(chatt)) != nil
                }
                #expect(posted.allSatisfy { $0 })
                let newest = try await repository.tick(before: .soon)
                var stored: [SequencedChatt] = []
                _ = try await repository.readChatts(at: newest.position(), before: .soon) { stored.append($0) }
                let logged = try await repository.log(after: start.position(), limit: 100, before: .soon)
                #expect(stored.count == 12)
                #expect(Set(logged.ticks.chatts.map(\.sequence)) == Set(stored.map(\.sequence)))
                let bySequence = Dictionary(uniqueKeysWithValues: stored.map { ($0.sequence, $0) })
                for row in logged.ticks.chatts { #expect(bySequence[row.sequence] == row) }
                for tick in logged.ticks {
                    #expect(tick.chatts.map(\.sequence) == tick.chatts.map(\.sequence).sorted(), "by seq in a tick")
                }
            }
        }

        @Test func aRefusedRowFailsAloneAndTheOthersOfItsBatchAreStored() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1)
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                try await batcher.store(NewChatt(name: "ok", message: "1"))
                let refused = await caughtAsync { () async throws(StoreError) in
                    try await batcher.store(NewChatt(name: "", message: "x"))
                }
                #expect(refused?.repositoryError.kind == .rejected)
                #expect(try database.column("SELECT message FROM chatts") == ["1"])
            }
        }

        @Test func aFullReadStreamsEveryChattInFeedOrderPastOneFetch() async throws {
            try await withRepository { repository, database throws in
                _ = try database.column("""
                    INSERT INTO chatts (name, message, time)
                    SELECT 'n', i::text, now() - (i % 7) * interval '1 second' FROM generate_series(1, 2500) AS i
                    """)
                let tick = try await repository.tick(before: .soon)
                var rows: [SequencedChatt] = []
                #expect(try await repository.readChatts(at: tick.position(), before: .soon) { rows.append($0) })
                #expect(rows.count == 2500)
                #expect(rows.map(\.position) == rows.map(\.position).sorted())
                let expected = try database.column("SELECT message FROM chatts ORDER BY time, seq")
                #expect(rows.map(\.chatt.message) == expected.compactMap { $0 })
            }
        }

        @Test func aFullReadAtAnOlderTickLeavesOutWhatCameAfterIt() async throws {
            try await withRepository { repository, _ throws in
                try await repository.add(NewChatt(name: "n", message: "before"))
                let older = try await repository.tick(before: .soon)
                try await repository.add(NewChatt(name: "n", message: "after"))
                _ = try await repository.tick(before: .soon)
                var rows: [String] = []
                _ = try await repository.readChatts(at: older.position(), before: .soon) {
                    rows.append($0.chatt.message)
                }
                #expect(rows == ["before"])
                #expect(try await repository.all().map(\.message) == ["before", "after"])
            }
        }
    }
}
