@testable import ChattStore
import Dispatch
import Foundation
import Testing

extension DatabaseTests {
    @Suite struct PoolWaitingTests {
        @Test func callersWaitingForAConnectionAreCounted() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .seconds(10))
                defer { pool.close() }
                let holder = ConnectionHolder(pool)
                defer { holder.release() }
                try #require(holder.waitUntilHeld())
                #expect(pool.stats.waiting == 0, "holding is not waiting")
                let waiters = DispatchGroup()
                for _ in 0..<2 {
                    DispatchQueue.global().async(group: waiters) { _ = try? pool.withConnection { _ in } }
                }
                #expect(Self.poll { pool.stats.waiting == 2 }, "waiting: \(pool.stats.waiting)")
                #expect(pool.stats.inUse == 1)
                holder.release()
                #expect(waiters.wait(timeout: .now() + 10) == .success)
                #expect(pool.stats.waiting == 0 && pool.stats.inUse == 0)
            }
        }

        @Test func aCallerThatTimesOutStopsWaiting() throws {
            try TestDatabase.with { database throws in
                let pool = database.pool(size: 1, acquireTimeout: .milliseconds(200))
                defer { pool.close() }
                let holder = ConnectionHolder(pool)
                defer { holder.release() }
                try #require(holder.waitUntilHeld())
                #expect(throws: StoreError(.poolTimeout)) { try pool.withConnection { _ in } }
                #expect(pool.stats.waiting == 0)
            }
        }

        /// Whether `condition` becomes true within 5 s.
        private static func poll(_ condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(5)
            while !condition() {
                guard Date() < deadline else { return false }
                usleep(10_000)
            }
            return true
        }
    }
}
