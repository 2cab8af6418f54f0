@testable import ChattStore
import Foundation
import Locking
import Testing

extension DatabaseTests {
    @Suite struct ChattChangeListenerTests {
        /// What a listener reported, in order.
        final class Events: Sendable {
            private let log = Locked<[String]>([])

            var all: [String] { log.withLock { $0 } }
            var changes: Int { all.filter { $0 == "change" }.count }

            func listener(
                _ database: TestDatabase, healthCheckInterval: Duration = ChattChangeListener.defaultHealthCheckInterval
            ) -> ChattChangeListener {
                ChattChangeListener(
                    conninfo: database.conninfo(), healthCheckInterval: healthCheckInterval,
                    onChange: { _ in self.log.withLock { $0.append("change") } },
                    onListening: { listening in self.log.withLock { $0.append(listening ? "listening" : "lost") } })
            }
        }

        @Test func notifyFromAnotherSessionReachesOnChange() async throws {
            try await TestDatabase.with { database throws in
                let events = Events()
                let listener = events.listener(database)
                listener.start()
                defer { listener.stop() }
                try #require(await waitUntil { events.all == ["listening"] })
                _ = try database.column("SELECT pg_notify('chatts_changed', '')")
                #expect(await waitUntil { events.changes == 1 })
                _ = try database.column("NOTIFY chatts_changed")
                #expect(await waitUntil { events.changes == 2 })
            }
        }

        @Test(arguments: [
            "INSERT INTO chatts (name, message) VALUES ('psql', 'spam')",
            "UPDATE chatts SET message = 'edited'",
            "DELETE FROM chatts WHERE name = 'psql'",
            "TRUNCATE chatts",
        ])
        func everyKindOfChangeByPlainSQLIsReported(statement: String) async throws {
            try await TestDatabase.with { database throws in
                _ = try database.column("INSERT INTO chatts (name, message) VALUES ('psql', 'first')")
                let events = Events()
                let listener = events.listener(database)
                listener.start()
                defer { listener.stop() }
                try #require(await waitUntil { events.all == ["listening"] })
                _ = try database.column(statement)
                #expect(await waitUntil { events.changes == 1 }, "\(statement)")
            }
        }

        @Test func terminatedSessionIsReportedLostThenListeningAgain() async throws {
            try await TestDatabase.with { database throws in
                let events = Events()
                let listener = events.listener(database)
                listener.start()
                defer { listener.stop() }
                try #require(await waitUntil { events.all == ["listening"] })
                #expect(try database.column(Self.terminateListenerSQL) == ["1"])
                #expect(await waitUntil { events.all == ["listening", "lost", "listening"] })
                // The new session listens too.
                _ = try database.column("INSERT INTO chatts (name, message) VALUES ('n', 'after')")
                #expect(await waitUntil { events.changes == 1 })
            }
        }

        @Test func stopEndsTheSessionAndReportsLostLast() async throws {
            try await TestDatabase.with { database throws in
                let events = Events()
                let listener = events.listener(database)
                listener.start()
                try #require(await waitUntil { events.all == ["listening"] })
                let stopped = inBackground { listener.stop() }
                #expect(stopped.wait(timeout: .now() + 5) == .success, "stop() did not return")
                #expect(events.all == ["listening", "lost"])
                #expect(await waitUntil { (try? database.column(Self.listenersSQL)) == ["0"] })
            }
        }

        @Test func aDisabledTriggerWithdrawsTrustUntilItIsEnabledAgain() async throws {
            try await TestDatabase.with { database throws in
                let events = Events()
                let listener = events.listener(database)
                listener.start()
                defer { listener.stop() }
                try #require(await waitUntil { events.all == ["listening"] })
                _ = try database.column("ALTER TABLE chatts DISABLE TRIGGER chatts_changed")
                #expect(await waitUntil { events.all == ["listening", "lost"] })
                _ = try database.column("ALTER TABLE chatts ENABLE TRIGGER chatts_changed")
                #expect(await waitUntil { events.all == ["listening", "lost", "listening"] })
                _ = try database.column("INSERT INTO chatts (name, message) VALUES ('n', 'armed again')")
                #expect(await waitUntil { events.changes == 1 })
            }
        }

        @Test func aDatabaseWithoutTheTriggerIsNeverTrusted() async throws {
            try await TestDatabase.with { database throws in
                _ = try database.column("DROP TRIGGER chatts_changed ON chatts")
                let events = Events()
                let listener = events.listener(database, healthCheckInterval: .milliseconds(50))
                listener.start()
                defer { listener.stop() }
                #expect(await waitUntil { (try? database.column(Self.listenersSQL)) == ["1"] })
                // Each health check is a statement, which moves the session's state_change: after several of them,
                // still no trust.
                var checks = Set<String>()
                for _ in 0..<1000 where checks.count <= 3 {
                    if let changed = Self.listenerStateChange(database) { checks.insert(changed) }
                    try await Task.sleep(for: .milliseconds(5))
                }
                #expect(checks.count > 3, "the listener's health checks did not run")
                #expect(events.all.isEmpty)
            }
        }

        static let listenersSQL = """
            SELECT count(*)::text FROM pg_stat_activity
            WHERE datname = current_database() AND query LIKE '%chatts_changed%' AND pid <> pg_backend_pid()
            """
        /// When the listener's session last changed state (each statement changes it), if it is connected.
        static func listenerStateChange(_ database: TestDatabase) -> String? {
            (try? database.column(listenerStateChangeSQL))?.first ?? nil
        }

        static let listenerStateChangeSQL = """
            SELECT state_change::text FROM pg_stat_activity
            WHERE datname = current_database() AND query LIKE '%chatts_changed%' AND pid <> pg_backend_pid()
            """
        static let terminateListenerSQL = """
            SELECT count(pg_terminate_backend(pid))::text FROM pg_stat_activity
            WHERE datname = current_database() AND query LIKE '%chatts_changed%' AND pid <> pg_backend_pid()
            """

        @Test func stopBeforeStartReturnsAndNothingRuns() {
            let listener = ChattChangeListener(
                conninfo: "host=/nonexistent", onChange: {}, onListening: { _ in Issue.record("listened") })
            listener.stop()
            listener.start()
        }
    }
}
