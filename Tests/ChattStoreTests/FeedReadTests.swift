import ChattModel
@testable import ChattStore
import Foundation
import Testing

extension DatabaseTests {
    /// What the feed cache reads: the rows a post stored, a streamed full read, and the rows after a position.
    @Suite struct FeedReadTests {
        func withRepository(_ body: (PostgresChattRepository, TestDatabase) async throws -> Void) async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool()
                defer { pool.close() }
                try await body(PostgresChattRepository(pool: pool), database)
            }
        }

        @Test func everyPostGetsItsBatchAsAFullReadWouldReadIt() async throws {
            try await withRepository { repository, _ throws in
                let all = await concurrently(12) { poster in
                    let geodata = poster % 2 == 0 ? "[1,2,\"N\",\"w\"]" : nil
                    let chatt = NewChatt(name: "t\(poster)", message: "é \"\(poster)\"", geodata: geodata)
                    return try? await repository.add(chatt)
                }.compactMap { $0 }
                #expect(all.count == 12)
                var stored: [SequencedChatt] = []
                _ = try await repository.readChatts(before: .soon) { stored.append($0) }
                let returned = Dictionary(all.flatMap(\.chatts).map { ($0.sequence, $0) }) { first, _ in first }
                #expect(returned.count == 12)
                for row in stored { #expect(returned[row.sequence] == row) }
                for batch in all {
                    #expect(batch.chatts.map(\.position) == batch.chatts.map(\.position).sorted())
                }
            }
        }

        @Test func aRefusedRowLeavesTheOthersOfItsBatchReturned() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1)
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                let stored = try await batcher.store(NewChatt(name: "ok", message: "1"))
                #expect(stored.chatts.map(\.chatt.message) == ["1"])
                let refused = await caughtAsync { () async throws(StoreError) in
                    _ = try await batcher.store(NewChatt(name: "", message: "x"))
                }
                #expect(refused?.repositoryError.kind == .rejected)
            }
        }

        @Test func aFullReadStreamsEveryChattInFeedOrderPastOneFetch() async throws {
            try await withRepository { repository, database throws in
                _ = try database.column("""
                    INSERT INTO chatts (name, message, time)
                    SELECT 'n', i::text, now() - (i % 7) * interval '1 second' FROM generate_series(1, 2500) AS i
                    """)
                var rows: [SequencedChatt] = []
                let version = try await repository.readChatts(before: .soon) { rows.append($0) }
                let current = try await repository.version(before: .soon)
                let all = try await repository.all()
                #expect(rows.count == 2500 && version == current)
                #expect(rows.map(\.position) == rows.map(\.position).sorted())
                #expect(rows.map(\.chatt) == all)
                let expected = try database.column("SELECT message FROM chatts ORDER BY time, seq")
                #expect(rows.map(\.chatt.message) == expected.compactMap { $0 })
            }
        }

        @Test func theChattsAfterAPositionComeWithTheStoreVersion() async throws {
            try await withRepository { repository, _ throws in
                let empty = try await repository.chatts(after: nil, limit: 1000, before: .soon)
                let origin = ChattsVersion(count: 0, lastSequence: 0, position: CommitPosition(epoch: 1, count: 0))
                #expect(empty == ChattDelta(chatts: [], version: origin))
                for index in 0..<6 { try await repository.add(NewChatt(name: "n", message: "\(index)")) }
                var rows: [SequencedChatt] = []
                _ = try await repository.readChatts(before: .soon) { rows.append($0) }
                let version = try await repository.version(before: .soon)
                let every = try await repository.chatts(after: nil, limit: 1000, before: .soon)
                #expect(every == ChattDelta(chatts: rows, version: version))
                for cut in 0..<6 {
                    let delta = try await repository.chatts(after: rows[cut].position, limit: 1000, before: .soon)
                    #expect(delta == ChattDelta(chatts: Array(rows[(cut + 1)...]), version: version))
                }
            }
        }

        @Test func theChattsAfterAPositionStopAtTheLimitAndTheVersionStillCountsThemAll() async throws {
            try await withRepository { repository, _ throws in
                for index in 0..<6 { try await repository.add(NewChatt(name: "n", message: "\(index)")) }
                var rows: [SequencedChatt] = []
                let version = try await repository.readChatts(before: .soon) { rows.append($0) }
                let first = try await repository.chatts(after: nil, limit: 2, before: .soon)
                #expect(first == ChattDelta(chatts: Array(rows[0..<2]), version: version))
                let next = try await repository.chatts(after: rows[1].position, limit: 3, before: .soon)
                #expect(next == ChattDelta(chatts: Array(rows[2..<5]), version: version))
            }
        }
    }
}
