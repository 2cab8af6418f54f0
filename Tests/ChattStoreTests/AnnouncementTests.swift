import ChattModel
@testable import ChattStore
import Foundation
import Locking
import Testing

/// What a `chatts_changed` payload says.
@Suite struct ChattChangePayloadTests {
    @Test(arguments: [
        ("insert", ChattChange.added(origin: nil)), ("insert 3fa9", .added(origin: "3fa9")), ("", .changed),
        ("tick", .ticked(origin: nil)), ("tick 3fa9", .ticked(origin: "3fa9")), ("tick a b", .changed),
        ("insert a b", .changed), ("inserted", .changed), ("ticks", .changed), ("delete", .changed),
        (" insert", .changed),
    ])
    func payloadsNameTheirChange(_ payload: String, _ change: ChattChange) {
        #expect(ChattChange(payload: payload) == change)
    }
}

extension DatabaseTests {
    /// chatterd's inserts notify nothing inside their transaction; every tick made is announced, with its origin.
    @Suite struct AnnouncementTests {
        /// The changes a listener reported, in order, and how many checks it made.
        final class Heard: Sendable {
            private let changes = Locked<[ChattChange]>([])
            private let checked = Locked(0)
            private let lost = Locked(0)

            var all: [ChattChange] { changes.withLock { $0 } }
            var checks: Int { checked.withLock { $0 } }
            var timesLost: Int { lost.withLock { $0 } }

            func listener(_ database: TestDatabase, origin: String?) -> ChattChangeListener {
                ChattChangeListener(
                    conninfo: database.conninfo(), origin: origin, healthCheckInterval: .milliseconds(100),
                    onChange: { change in self.changes.withLock { $0.append(change) } },
                    onCheck: { self.checked.withLock { $0 += 1 } },
                    onListening: { listening in if !listening { self.lost.withLock { $0 += 1 } } })
            }
        }

        /// Sends a marker after whatever was committed before: notifications arrive in commit order, so once the
        /// marker is heard, everything before it has been.
        static let markerSQL = "SELECT pg_notify('chatts_changed', 'marker')"

        @Test func aBatchNotifiesNothingAndTheTickThatTakesItInIsAnnouncedOnceWithItsOrigin() async throws {
            try await TestDatabase.with { database throws in
                let pool = database.pool(size: 2)
                defer { pool.close() }
                let repository = PostgresChattRepository(pool: pool)
                let heard = Heard()
                let listener = heard.listener(database, origin: nil)
                listener.start()
                defer { listener.stop() }
                try #require(await waitUntil { heard.checks > 0 })
                try await repository.add(NewChatt(name: "n", message: "m"))
                _ = try await repository.tick(before: .soon)
                _ = try await repository.tick(before: .soon)
                _ = try database.column(Self.markerSQL)
                #expect(await waitUntil { heard.all.count == 2 })
                #expect(heard.all == [.ticked(origin: repository.origin), .changed], "a tick of nothing new is silent")
            }
        }

        @Test func aListenerLeavesOutItsOwnProcessesTicksButNotOthers() async throws {
            try await TestDatabase.with { database throws in
                let heard = Heard()
                let listener = heard.listener(database, origin: "mine")
                listener.start()
                defer { listener.stop() }
                try #require(await waitUntil { heard.checks > 0 })
                _ = try database.column("INSERT INTO chatts (name, message) VALUES ('psql', 'p')")
                _ = try database.column("SELECT tick FROM chatts_tick('mine')")
                _ = try database.column("INSERT INTO chatts (name, message) VALUES ('psql', 'q')")
                _ = try database.column("SELECT tick FROM chatts_tick('theirs')")
                _ = try database.column("INSERT INTO chatts (name, message) VALUES ('psql', 'r')")
                _ = try database.column("SELECT tick FROM chatts_tick()")
                _ = try database.column("DELETE FROM chatts WHERE name = 'psql'")
                _ = try database.column(Self.markerSQL)
                #expect(await waitUntil { heard.all.count == 7 })
                #expect(heard.all == [
                    .added(origin: nil), .added(origin: nil), .ticked(origin: "theirs"), .added(origin: nil),
                    .ticked(origin: nil), .changed, .changed,
                ])
            }
        }

        @Test func everyHealthCheckCallsTheFallbackAndAnUnannouncedInsertNotifiesNothing() async throws {
            try await TestDatabase.with { database throws in
                let heard = Heard()
                let listener = heard.listener(database, origin: nil)
                listener.start()
                defer { listener.stop() }
                // Marked as chatterd's and never announced: as when its process died right after the commit.
                _ = try database.column("""
                    INSERT INTO chatts (name, message) SELECT 'n', 'm'
                    WHERE \(ChattsChangedNotice.announcesInsertCondition)
                    """)
                #expect(await waitUntil { heard.checks >= 3 }, "the change log's fallback comes at every check")
                _ = try database.column(Self.markerSQL)
                #expect(await waitUntil { heard.all == [.changed] }, "the insert itself notified nothing")
            }
        }

        @Test func aTableLockStallsNeitherTheChecksNorTheNotifications() async throws {
            try await TestDatabase.with { database throws in
                let heard = Heard()
                let listener = heard.listener(database, origin: nil)
                listener.start()
                defer { listener.stop() }
                try #require(await waitUntil { heard.checks > 0 })
                let locker = try await ConnectionHolder.lockingChatts(in: database)
                defer { locker.letGo() }
                let checked = heard.checks
                // The check reads only the catalog: it goes on under an operator's LOCK TABLE, and so do notices.
                for round in 0..<3 {
                    _ = try database.column(Self.markerSQL)
                    #expect(await waitUntil { heard.all.count == round + 1 })
                }
                #expect(await waitUntil { heard.checks > checked + 2 })
                #expect(heard.timesLost == 0)
                await locker.release()
            }
        }
    }
}
