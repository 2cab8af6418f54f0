import ChattModel
@testable import ChattStore
import Foundation
import Locking
import Testing

extension DatabaseTests {
    /// What the feed cache reads: the rows a post stored, a streamed full read, and the rows after a position.
    @Suite struct FeedReadTests {
        func withRepository(_ body: (PostgresChattRepository, TestDatabase) throws -> Void) throws {
            try TestDatabase.with { database throws in
                let pool = database.pool()
                defer { pool.close() }
                try body(PostgresChattRepository(pool: pool), database)
            }
        }

        @Test func everyPostGetsItsBatchAsAFullReadWouldReadIt() throws {
            try withRepository { repository, _ throws in
                let batches = Locked<[ChattBatch]>([])
                onThreads(12) { thread in
                    let chatt = NewChatt(name: "t\(thread)", message: "é \"\(thread)\"", geodata: thread % 2 == 0 ? "[1,2,\"N\",\"w\"]" : nil)
                    if let batch = try? repository.add(chatt) { batches.withLock { $0.append(batch) } }
                }
                let all = batches.withLock { $0 }
                #expect(all.count == 12)
                var stored: [SequencedChatt] = []
                _ = try repository.readChatts { stored.append($0) }
                let returned = Dictionary(all.flatMap(\.chatts).map { ($0.sequence, $0) }) { first, _ in first }
                #expect(returned.count == 12)
                for row in stored { #expect(returned[row.sequence] == row) }
                for batch in all {
                    #expect(batch.chatts.map(\.position) == batch.chatts.map(\.position).sorted())
                }
            }
        }

        @Test func aRefusedRowLeavesTheOthersOfItsBatchReturned() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(size: 1)
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                let stored = try batcher.store(NewChatt(name: "ok", message: "1"))
                #expect(stored.chatts.map(\.chatt.message) == ["1"])
                #expect(caught { () throws(StoreError) in _ = try batcher.store(NewChatt(name: "", message: "x")) }?
                    .repositoryError.kind == .rejected)
            }
        }

        @Test func aFullReadStreamsEveryChattInFeedOrderPastOneFetch() throws {
            try withRepository { repository, database throws in
                _ = try database.column("""
                    INSERT INTO chatts (name, message, time)
                    SELECT 'n', i::text, now() - (i % 7) * interval '1 second' FROM generate_series(1, 2500) AS i
                    """)
                var rows: [SequencedChatt] = []
                let version = try repository.readChatts { rows.append($0) }
                let current = try repository.version()
                let all = try repository.all()
                #expect(rows.count == 2500 && version == current)
                #expect(rows.map(\.position) == rows.map(\.position).sorted())
                #expect(rows.map(\.chatt) == all)
                let expected = try database.column("SELECT message FROM chatts ORDER BY time, seq")
                #expect(rows.map(\.chatt.message) == expected.compactMap { $0 })
            }
        }

        @Test func theChattsAfterAPositionComeWithTheStoreVersion() throws {
            try withRepository { repository, _ throws in
                let empty = try repository.chatts(after: nil)
                #expect(empty == ChattDelta(chatts: [], version: ChattsVersion(count: 0, lastSequence: 0)))
                for index in 0..<6 { try repository.add(NewChatt(name: "n", message: "\(index)")) }
                var rows: [SequencedChatt] = []
                _ = try repository.readChatts { rows.append($0) }
                let version = try repository.version()
                let every = try repository.chatts(after: nil)
                #expect(every == ChattDelta(chatts: rows, version: version))
                for cut in 0..<6 {
                    let delta = try repository.chatts(after: rows[cut].position)
                    #expect(delta == ChattDelta(chatts: Array(rows[(cut + 1)...]), version: version))
                }
            }
        }
    }
}
