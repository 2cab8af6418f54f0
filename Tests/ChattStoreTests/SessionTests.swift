import ChattModel
@testable import ChattStore
import Testing

extension DatabaseTests {
    /// Statements run from the pool's readiness loop (`PGConnectionPool.withSession`): nobody's thread blocks.
    @Suite struct SessionTests {
        @Test func aSessionRunsStatementsWithParametersAndGivesTheConnectionBack() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1)
                defer { pool.close() }
                let values = try await pool.withSession(before: .now + .seconds(5)) { session throws(StoreError) in
                    let sum = try await session.query("SELECT $1::int + $2::int", ["40", "2"])
                    let text = try await session.query("SELECT $1::text", ["héllo"])
                    return [sum.string(row: 0, column: 0), text.string(row: 0, column: 0)]
                }
                #expect(values == ["42", "héllo"])
                #expect(pool.stats == PGConnectionPool.Stats(size: 1, inUse: 0, idle: 1))
            }
        }

        @Test func aFailedStatementReportsItsStateAndLeavesTheConnectionUsable() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1)
                defer { pool.close() }
                let error = await caughtAsync { () async throws(StoreError) in
                    _ = try await pool.withSession(before: .now + .seconds(5)) { session throws(StoreError) in
                        try await session.query("SELECT 1/0")
                    }
                }
                #expect(error?.code == .queryFailed)
                #expect(error?.sqlState == "22012")
                #expect(pool.stats.idle == 1)
                let again = try await pool.withSession(before: .now + .seconds(5)) { session throws(StoreError) in
                    try await session.query("SELECT 'again'").string(row: 0, column: 0)
                }
                #expect(again == "again")
            }
        }

        @Test func resultsAndParametersLargerThanTheSocketBuffersArriveWhole() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1)
                defer { pool.close() }
                let big = String(repeating: "0123456789", count: 400_000)
                let deadline = ContinuousClock.now + .seconds(20)
                let (echoed, rows) = try await pool.withSession(before: deadline) { session throws(StoreError) in
                    let echo = try await session.query("SELECT length($1::text)", [big])
                    let many = try await session.query("SELECT g, repeat('x', 100) FROM generate_series(1, 50000) g")
                    return (echo.string(row: 0, column: 0), many)
                }
                #expect(echoed == String(big.count))
                #expect(rows.rowCount == 50_000)
                #expect(rows.string(row: 49_999, column: 0) == "50000")
            }
        }

        @Test func manyMoreSessionsThanConnectionsAllFinish() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 2, acquireTimeout: .seconds(20))
                defer { pool.close() }
                let answers = try await withThrowingTaskGroup(of: String?.self) { group in
                    for index in 0..<200 {
                        group.addTask {
                            try await pool.withSession(before: .now + .seconds(20)) { session throws(StoreError) in
                                try await session.query("SELECT $1::text", [String(index)]).string(row: 0, column: 0)
                            }
                        }
                    }
                    return try await group.reduce(into: Set<String>()) { $0.insert($1 ?? "") }
                }
                #expect(answers == Set((0..<200).map(String.init)))
                #expect(pool.stats == PGConnectionPool.Stats(size: 2, inUse: 0, idle: 2))
            }
        }

        @Test func aStatementPastItsDeadlineTimesOutAndItsConnectionIsDropped() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1)
                defer { pool.close() }
                let locker = try await ConnectionHolder.lockingChatts(in: database)
                defer { locker.letGo() }
                let error = await caughtAsync { () async throws(StoreError) in
                    _ = try await pool.withSession(before: .now + .milliseconds(300)) { session throws(StoreError) in
                        try await session.query("SELECT count(*) FROM chatts")
                    }
                }
                #expect(error?.code == .timedOut)
                #expect(error?.repositoryError.kind == .unavailable)
                #expect(pool.stats == PGConnectionPool.Stats(size: 1, inUse: 0, idle: 0), "the connection was dropped")
                await locker.release()
                let count = try await pool.withSession(before: .now + .seconds(5)) { session throws(StoreError) in
                    try await session.query("SELECT count(*) FROM chatts").string(row: 0, column: 0)
                }
                #expect(count == "0")
            }
        }

        @Test func waitingForAConnectionEndsAtTheAcquireTimeout() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .milliseconds(200))
                defer { pool.close() }
                let holder = ConnectionHolder(pool)
                defer { holder.letGo() }
                try #require(await holder.waitUntilHeld())
                let error = await caughtAsync { () async throws(StoreError) in
                    try await pool.withSession(before: .now + .seconds(5)) { _ throws(StoreError) in }
                }
                #expect(error?.code == .poolTimeout)
                #expect(pool.stats.waiting == 0)
                await holder.release()
                try await pool.withSession(before: .now + .seconds(5)) { _ throws(StoreError) in }
            }
        }

        @Test func aSessionWaitingForAConnectionGetsTheOneGivenBack() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .seconds(10))
                defer { pool.close() }
                let holder = ConnectionHolder(pool)
                try #require(await holder.waitUntilHeld())
                async let answer = pool.withSession(before: .now + .seconds(10)) { session throws(StoreError) in
                    try await session.query("SELECT 'mine'").string(row: 0, column: 0)
                }
                try #require(await waitUntil { pool.stats.waiting == 1 })
                await holder.release()
                #expect(try await answer == "mine")
            }
        }

        @Test func aGrantComesAsAnEventOfItsOwnNeverInsideTheLeaseThatAskedForIt() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1)
                defer { pool.close() }
                try await pool.withSession(before: .now + .seconds(5)) { _ throws(StoreError) in }
                // An idle connection is there, so the pool grants it at once: after the lease has returned.
                let granted = Promise<Result<PGConnection, StoreError>>()
                let grantedInside = pool.loop.queue.sync {
                    pool.lease(before: .now + .seconds(5)) { granted.fulfil($0) }
                    return granted.current != nil
                }
                #expect(!grantedInside)
                let connection = try #require(await granted.value()).get()
                pool.loop.queue.sync { pool.release(connection) }
                #expect(pool.stats == PGConnectionPool.Stats(size: 1, inUse: 0, idle: 1))
            }
        }

        @Test func aKilledBackendIsUnavailableAndReplaced() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1)
                defer { pool.close() }
                let error = await caughtAsync { () async throws(StoreError) in
                    try await pool.withSession(before: .now + .seconds(5)) { session throws(StoreError) in
                        _ = try await session.query("SELECT 1")
                        _ = try terminateBackends(of: database)
                        _ = try await session.query("SELECT 2")
                    }
                }
                #expect(error?.repositoryError.kind == .unavailable)
                #expect(pool.stats == PGConnectionPool.Stats(size: 1, inUse: 0, idle: 0))
                try await pool.withSession(before: .now + .seconds(5)) { session throws(StoreError) in
                    _ = try await session.query("SELECT 3")
                }
            }
        }

        @Test func aClosedPoolRefusesSessions() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1)
                pool.close()
                let error = await caughtAsync { () async throws(StoreError) in
                    try await pool.withSession(before: .now + .seconds(5)) { _ throws(StoreError) in }
                }
                #expect(error?.code == .poolClosed)
            }
        }
    }
}

@Suite(.onDispatch) struct UnreachableSessionTests {
    @Test func aHungServerEndsTheWaitAtTheAcquireTimeoutAndTheConnectFinishesAlone() async throws {
        let listener = try SilentListener()
        let pool = PGConnectionPool(
            conninfo: "host=127.0.0.1 port=\(listener.port) dbname=x user=x", size: 1, acquireTimeout: .milliseconds(200))
        let error = await caughtAsync { () async throws(StoreError) in
            try await pool.withSession(before: .now + .seconds(5)) { _ throws(StoreError) in }
        }
        #expect(error?.code == .poolTimeout)
    }
}
