import ChattModel
@testable import ChattStore
import Foundation
import Locking
import Testing

extension DatabaseTests {
    @Suite struct InsertBatcherTests {
        @Test func concurrentInsertsAreStoredOnceEachInEachCallersOrder() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 4)
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                let failures = await concurrently(40) { caller in
                    var failures: [StoreError] = []
                    for index in 0..<5 {
                        let chatt = NewChatt(name: "t\(caller)", message: "\(caller)-\(index)")
                        let error = await caughtAsync { () async throws(StoreError) in
                            _ = try await batcher.store(chatt)
                        }
                        if let error { failures.append(error) }
                    }
                    return failures
                }
                #expect(failures.flatMap { $0 } == [])
                let rows = try database.column("SELECT message FROM chatts ORDER BY time, seq").compactMap { $0 }
                #expect(rows.count == 200)
                #expect(Set(rows).count == 200)
                for caller in 0..<40 {
                    let mine = rows.filter { $0.hasPrefix("\(caller)-") }
                    #expect(mine == (0..<5).map { "\(caller)-\($0)" })
                }
                #expect(try database.column("SELECT message FROM chatts ORDER BY seq").compactMap { $0 } == rows)
            }
        }

        @Test func insertsQueuedBehindTheLeaderShareOneCommitInQueueOrder() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .seconds(5))
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                let chatts = (0..<6).map { NewChatt(name: "n", message: "\($0)") }
                let outcomes = try await insertWhileHeld(chatts, batcher: batcher, pool: pool)
                #expect(outcomes.map(\.isSuccess) == Array(repeating: true, count: 6))
                #expect(try database.column("SELECT message FROM chatts ORDER BY seq") == (0..<6).map { "\($0)" })
                #expect(try database.column("SELECT count(DISTINCT xmin::text) FROM chatts") == ["1"])
            }
        }

        @Test func badRowsInABatchFailAloneAndTheRestAreStoredInOrder() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .seconds(5))
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                var chatts = (0..<6).map { NewChatt(name: "n", message: "\($0)") }
                chatts[2].name = String(repeating: "x", count: 33)  // check constraint: 23514
                chatts[4].message = "nul\u{0}inside"  // cannot be sent as text
                let outcomes = try await insertWhileHeld(chatts, batcher: batcher, pool: pool)
                #expect(outcomes.map(\.isSuccess) == [true, true, false, true, false, true])
                #expect(outcomes.map { $0.failure?.repositoryError.kind } == [nil, nil, .rejected, nil, .rejected, nil])
                #expect(try database.column("SELECT message FROM chatts ORDER BY seq") == ["0", "1", "3", "5"])
            }
        }

        @Test func killedBackendFailsItsWholeBatchAsUnavailableAndTheNextBatchSucceeds() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .seconds(5))
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                let locker = try await ConnectionHolder.lockingChatts(in: database)
                defer { locker.letGo() }
                let chatts = (0..<4).map { NewChatt(name: "n", message: "\($0)") }
                let outcomes = try await insertWhileHeld(chatts, batcher: batcher, pool: pool) {
                    // The batch now waits for the table lock, so it cannot have committed when its backend dies.
                    #expect(await waitUntil { (try? database.column(Self.terminateWaitingInsertSQL)) == ["1"] })
                }
                #expect(outcomes.map { $0.failure?.repositoryError.kind } == Array(repeating: .unavailable, count: 4))
                await locker.release()
                _ = try await batcher.store(NewChatt(name: "n", message: "after"))
                #expect(try database.column("SELECT message FROM chatts ORDER BY seq") == ["after"])
            }
        }

        static let terminateWaitingInsertSQL = """
            SELECT count(pg_terminate_backend(pid))::text FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO chatts%'
            """
        static let countWaitingInsertSQL = """
            SELECT count(*)::text FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO chatts%'
            """

        @Test func insertStillQueuedAtTheAcquireTimeoutIsUnavailable() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 2, acquireTimeout: .milliseconds(300))
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                let locker = try await ConnectionHolder.lockingChatts(in: database)
                defer { locker.letGo() }
                // The first insert leads and blocks on the lock; the second queues behind it and gives up.
                let first = queue(NewChatt(name: "n", message: "first"), in: batcher)
                try #require(await waitUntil { (try? database.column(Self.countWaitingInsertSQL)) == ["1"] })
                let second = await caughtAsync { () async throws(StoreError) in
                    _ = try await batcher.store(NewChatt(name: "n", message: "2"))
                }
                #expect(second?.code == .poolTimeout)
                #expect(second?.repositoryError.kind == .unavailable)
                await locker.release()
                #expect(await first.value()?.isSuccess == true)
                #expect(try database.column("SELECT message FROM chatts") == ["first"])
            }
        }

        @Test func everyQueuedInsertFailsWhenNoConnectionFreesUp() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .milliseconds(300))
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                let holder = ConnectionHolder(pool)
                defer { holder.letGo() }
                try #require(await holder.waitUntilHeld())
                let failures = await concurrently(3) { index in
                    await caughtAsync { () async throws(StoreError) in
                        _ = try await batcher.store(NewChatt(name: "n", message: "\(index)"))
                    }?.code
                }
                #expect(failures == [.poolTimeout, .poolTimeout, .poolTimeout])
                await holder.release()
                _ = try await batcher.store(NewChatt(name: "n", message: "later"))
                #expect(try database.column("SELECT message FROM chatts") == ["later"])
            }
        }

        @Test func aFullQueueRefusesWithoutWaitingForTheDatabase() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .seconds(5))
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool, maximumQueued: 2)
                let holder = ConnectionHolder(pool)
                defer { holder.letGo() }
                try #require(await holder.waitUntilHeld())
                let outcomes = ["0", "1", "2"].map { queue(NewChatt(name: "n", message: $0), in: batcher) }
                // The third is refused at once, while the first two still wait for the held connection.
                #expect(await outcomes[2].value()?.failure?.code == .queueFull)
                #expect(outcomes.map { $0.current == nil } == [true, true, false])
                #expect(outcomes[2].current?.failure?.repositoryError.kind == .unavailable)
                await holder.release()
                #expect(await outcomes[0].value()?.isSuccess == true)
                #expect(await outcomes[1].value()?.isSuccess == true)
                #expect(try database.column("SELECT message FROM chatts ORDER BY seq") == ["0", "1"], "in queue order")
                #expect(try database.column("SELECT count(DISTINCT xmin::text) FROM chatts") == ["1"], "one batch")
            }
        }

        @Test func eachBatchIsReportedCommittedOnceBeforeAnyOfItsInsertsIsAnswered() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .seconds(5))
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                let answered = Locked(0)
                let reports = Locked<[Int]>([])
                batcher.observeCommits { reports.withLock { $0.append(answered.withLock { $0 }) } }
                let chatts = (0..<5).map { NewChatt(name: "n", message: "\($0)") }
                let holder = ConnectionHolder(pool)
                defer { holder.letGo() }
                try #require(await holder.waitUntilHeld())
                let outcomes = chatts.map { chatt in
                    let outcome = Promise<Result<Void, StoreError>>()
                    batcher.store(chatt) { result in
                        answered.withLock { $0 += 1 }
                        outcome.fulfil(result)
                    }
                    return outcome
                }
                await holder.release()
                for outcome in outcomes { #expect(await outcome.value()?.isSuccess == true) }
                #expect(reports.withLock { $0 } == [0], "one batch, one report, before its first answer")
                // A batch that stored nothing, refused whole by the server, is not reported.
                let refused = await caughtAsync { () async throws(StoreError) in
                    try await batcher.store(NewChatt(name: "", message: "too short a name"))
                }
                #expect(refused?.repositoryError.kind == .rejected)
                #expect(reports.withLock { $0.count } == 1)
            }
        }

        /// Queues `chatts` one after another while the pool's only connection is held, so they form one batch;
        /// releases it, runs `whileWriting`, and returns each insert's outcome.
        private func insertWhileHeld(
            _ chatts: [NewChatt], batcher: InsertBatcher, pool: PGConnectionPool,
            whileWriting: () async -> Void = {}
        ) async throws -> [Result<Void, StoreError>] {
            let holder = ConnectionHolder(pool)
            defer { holder.letGo() }
            try #require(await holder.waitUntilHeld())
            // Each is queued before `queue` returns, so the next comes after it.
            let outcomes = chatts.map { queue($0, in: batcher) }
            await holder.release()
            await whileWriting()
            var results: [Result<Void, StoreError>] = []
            for outcome in outcomes { results.append(try #require(await outcome.value())) }
            return results
        }
    }
}

/// Queues `chatt` in `batcher` at once (through the completion form), and returns where its outcome will come.
func queue(_ chatt: NewChatt, in batcher: InsertBatcher) -> Promise<Result<Void, StoreError>> {
    let outcome = Promise<Result<Void, StoreError>>()
    batcher.store(chatt) { outcome.fulfil($0) }
    return outcome
}

extension Result {
    /// Whether this is a success.
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }

    /// The error of a failure.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
