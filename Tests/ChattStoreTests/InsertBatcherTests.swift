import ChattModel
@testable import ChattStore
import Foundation
import Locking
import Testing

extension DatabaseTests {
    @Suite struct InsertBatcherTests {
        @Test func concurrentInsertsAreStoredOnceEachInPerThreadOrder() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(size: 4)
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                let failures = Locked<[StoreError]>([])
                onThreads(40) { thread in
                    for index in 0..<5 {
                        let chatt = NewChatt(name: "t\(thread)", message: "\(thread)-\(index)")
                        if let error = caught({ () throws(StoreError) in try batcher.insert(chatt) }) {
                            failures.withLock { $0.append(error) }
                        }
                    }
                }
                #expect(failures.withLock { $0 } == [])
                let rows = try database.column("SELECT message FROM chatts ORDER BY time, seq").compactMap { $0 }
                #expect(rows.count == 200)
                #expect(Set(rows).count == 200)
                for thread in 0..<40 {
                    let mine = rows.filter { $0.hasPrefix("\(thread)-") }
                    #expect(mine == (0..<5).map { "\(thread)-\($0)" })
                }
                #expect(try database.column("SELECT message FROM chatts ORDER BY seq").compactMap { $0 } == rows)
            }
        }

        @Test func insertsQueuedBehindTheLeaderShareOneCommitInQueueOrder() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .seconds(5))
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                let chatts = (0..<6).map { NewChatt(name: "n", message: "\($0)") }
                let outcomes = try insertWhileHeld(chatts, batcher: batcher, pool: pool)
                #expect(outcomes.map(\.isSuccess) == Array(repeating: true, count: 6))
                #expect(try database.column("SELECT message FROM chatts ORDER BY seq") == (0..<6).map { "\($0)" })
                #expect(try database.column("SELECT count(DISTINCT xmin::text) FROM chatts") == ["1"])
            }
        }

        @Test func badRowsInABatchFailAloneAndTheRestAreStoredInOrder() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .seconds(5))
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                var chatts = (0..<6).map { NewChatt(name: "n", message: "\($0)") }
                chatts[2].name = String(repeating: "x", count: 33)  // check constraint: 23514
                chatts[4].message = "nul\u{0}inside"  // cannot be sent as text
                let outcomes = try insertWhileHeld(chatts, batcher: batcher, pool: pool)
                #expect(outcomes.map(\.isSuccess) == [true, true, false, true, false, true])
                #expect(outcomes.map { $0.failure?.repositoryError.kind } == [nil, nil, .rejected, nil, .rejected, nil])
                #expect(try database.column("SELECT message FROM chatts ORDER BY seq") == ["0", "1", "3", "5"])
            }
        }

        @Test func killedBackendFailsItsWholeBatchAsUnavailableAndTheNextBatchSucceeds() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .seconds(5))
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                let locker = try ConnectionHolder.lockingChatts(in: database)
                defer { locker.release() }
                let chatts = (0..<4).map { NewChatt(name: "n", message: "\($0)") }
                let outcomes = try insertWhileHeld(chatts, batcher: batcher, pool: pool) {
                    // The batch now waits for the table lock, so it cannot have committed when its backend dies.
                    #expect(waitUntil { (try? database.column(Self.terminateWaitingInsertSQL)) == ["1"] })
                }
                #expect(outcomes.map { $0.failure?.repositoryError.kind } == Array(repeating: .unavailable, count: 4))
                locker.release()
                try batcher.insert(NewChatt(name: "n", message: "after"))
                #expect(try database.column("SELECT message FROM chatts ORDER BY seq") == ["after"])
            }
        }

        static let terminateWaitingInsertSQL = """
            SELECT count(pg_terminate_backend(pid))::text FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO chatts%'
            """
        static let countWaitingInsertSQL = """
            SELECT count(*)::text FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO chatts%'
            """

        @Test func insertStillQueuedAtTheAcquireTimeoutIsUnavailable() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(size: 2, acquireTimeout: .milliseconds(300))
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                let locker = try ConnectionHolder.lockingChatts(in: database)
                defer { locker.release() }
                // The first insert leads and blocks on the lock; the second queues behind it and gives up.
                let first = Locked<Result<Void, StoreError>?>(nil)
                let leader = inBackground { first.withLock { $0 = Result { () throws(StoreError) in
                    try batcher.insert(NewChatt(name: "n", message: "first"))
                } } }
                try #require(waitUntil { (try? database.column(Self.countWaitingInsertSQL)) == ["1"] })
                let second = caught { () throws(StoreError) in try batcher.insert(NewChatt(name: "n", message: "2")) }
                #expect(second?.code == .poolTimeout)
                #expect(second?.repositoryError.kind == .unavailable)
                locker.release()
                leader.wait()
                #expect(first.withLock { $0?.isSuccess } == true)
                #expect(try database.column("SELECT message FROM chatts") == ["first"])
            }
        }

        @Test func everyQueuedInsertFailsWhenNoConnectionFreesUp() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .milliseconds(300))
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                let holder = ConnectionHolder(pool)
                defer { holder.release() }
                try #require(holder.waitUntilHeld())
                let failures = Locked<[StoreError.Code?]>([])
                onThreads(3) { index in
                    let error = caught { () throws(StoreError) in
                        try batcher.insert(NewChatt(name: "n", message: "\(index)"))
                    }
                    failures.withLock { $0.append(error?.code) }
                }
                #expect(failures.withLock { $0 } == [.poolTimeout, .poolTimeout, .poolTimeout])
                holder.release()
                try batcher.insert(NewChatt(name: "n", message: "later"))
                #expect(try database.column("SELECT message FROM chatts") == ["later"])
            }
        }

        @Test func aFullQueueRefusesWithoutWaitingForTheDatabase() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .seconds(5))
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool, maximumQueued: 2)
                let holder = ConnectionHolder(pool)
                defer { holder.release() }
                try #require(holder.waitUntilHeld())
                let outcomes = Locked<[String: Result<ChattBatch, StoreError>]>([:])
                let answered = DispatchGroup()
                for message in ["0", "1", "2"] {
                    answered.enter()
                    batcher.store(NewChatt(name: "n", message: message)) { outcome in
                        outcomes.withLock { $0[message] = outcome }
                        answered.leave()
                    }
                }
                // The third is refused at once, while the first two still wait for the held connection.
                #expect(waitUntil { outcomes.withLock { $0["2"] != nil } })
                #expect(outcomes.withLock { $0.keys.sorted() } == ["2"])
                #expect(outcomes.withLock { $0["2"]?.failure?.code } == .queueFull)
                #expect(outcomes.withLock { $0["2"]?.failure?.repositoryError.kind } == .unavailable)
                #expect(batcher.queuedCount == 2)
                holder.release()
                answered.wait()
                let stored = outcomes.withLock { $0["0"].flatMap { try? $0.get() } }
                #expect(stored?.chatts.map(\.chatt.message) == ["0", "1"], "one batch, in queue order")
                #expect(try database.column("SELECT message FROM chatts ORDER BY seq") == ["0", "1"])
            }
        }

        /// Queues `chatts` one after another while the pool's only connection is held, so they form one batch;
        /// releases it, runs `whileWriting`, and returns each insert's outcome.
        private func insertWhileHeld(
            _ chatts: [NewChatt], batcher: InsertBatcher, pool: PGConnectionPool, whileWriting: () -> Void = {}
        ) throws -> [Result<Void, StoreError>] {
            let holder = ConnectionHolder(pool)
            defer { holder.release() }
            try #require(holder.waitUntilHeld())
            let outcomes = Locked<[Int: Result<Void, StoreError>]>([:])
            var running: [DispatchGroup] = []
            for (index, chatt) in chatts.enumerated() {
                running.append(inBackground {
                    let outcome = Result { () throws(StoreError) in try batcher.insert(chatt) }
                    outcomes.withLock { $0[index] = outcome }
                })
                try #require(waitUntil { batcher.queuedCount == index + 1 })
            }
            holder.release()
            whileWriting()
            for group in running { group.wait() }
            return try outcomes.withLock { all in try chatts.indices.map { try #require(all[$0]) } }
        }
    }
}

/// Runs `body` on a new thread; the group is left when it returns.
func inBackground(_ body: @escaping @Sendable () -> Void) -> DispatchGroup {
    let group = DispatchGroup()
    group.enter()
    Thread {
        body()
        group.leave()
    }.start()
    return group
}

/// Polls `condition` every 5 ms; false if it is still false after 5 s.
func waitUntil(_ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        Thread.sleep(forTimeInterval: 0.005)
    }
    return true
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
