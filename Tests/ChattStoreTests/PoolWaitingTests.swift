@testable import ChattStore
import Testing

extension DatabaseTests {
    @Suite struct PoolWaitingTests {
        @Test func callersWaitingForAConnectionAreCounted() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .seconds(10))
                defer { pool.close() }
                let holder = ConnectionHolder(pool)
                defer { holder.letGo() }
                try #require(await holder.waitUntilHeld())
                #expect(pool.stats.waiting == 0, "holding is not waiting")
                let waiters = (0..<2).map { _ in
                    Task { try? await pool.withSession(before: .now + .seconds(10)) { _ throws(StoreError) in } }
                }
                #expect(await waitUntil { pool.stats.waiting == 2 }, "waiting: \(pool.stats.waiting)")
                #expect(pool.stats.inUse == 1)
                await holder.release()
                for waiter in waiters { #expect(await waiter.value != nil) }
                #expect(pool.stats.waiting == 0 && pool.stats.inUse == 0)
            }
        }
    }
}
