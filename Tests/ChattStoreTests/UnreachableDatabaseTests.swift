import ChattModel
@testable import ChattStore
import Foundation
import Testing

/// Failures that need no running database, so they always run.
@Suite(.onDispatch) struct UnreachableDatabaseTests {
    @Test(arguments: [
        "host=127.0.0.1 port=1 dbname=chatterd user=chatterd",
        "postgresql:///chatterd?host=/nonexistent-chatterd-sockets&port=5999",
    ])
    func unreachableDatabaseIsUnavailableQuickly(conninfo: String) async throws {
        let pool = PGConnectionPool(conninfo: conninfo)
        let repository = PostgresChattRepository(pool: pool)
        var error: RepositoryError?
        let elapsed = await seconds {
            error = await caughtAsync { () async throws(RepositoryError) in
                try await repository.add(NewChatt(name: "a", message: "b"))
            }
        }
        #expect(error?.kind == .unavailable)
        // Refused at once: well short of connect_timeout (3 s), with room for a sanitizer's slowness.
        #expect(elapsed < 2.5, "\(elapsed) s")
        // Right after a failed connect the pool backs off instead of trying again (when it tries again is
        // ConnectBackoffTests', on a made-up clock).
        let second = await Self.sessionError(pool)
        #expect(second?.code == .backingOff)
        #expect(second?.repositoryError.kind == .unavailable)
        #expect(pool.stats == PGConnectionPool.Stats(size: 4, inUse: 0, idle: 0))
    }

    @Test func hungServerTimesOutWithinTheConnectTimeout() async throws {
        let listener = try SilentListener()
        // Deadlines far past libpq's connect_timeout (3 s), so that what ends the wait is libpq giving up on the
        // connect (connectFailed), not ours (timedOut, poolTimeout). The time is only bounded below: a loaded
        // machine (the sanitizers') can make it take longer, never shorter.
        let pool = PGConnectionPool(
            conninfo: "host=127.0.0.1 port=\(listener.port) dbname=x user=x", acquireTimeout: .seconds(120))
        var error: StoreError?
        let elapsed = await seconds {
            error = await caughtAsync { () async throws(StoreError) in
                try await pool.withSession(before: .now + .seconds(120)) { _ throws(StoreError) in }
            }
        }
        #expect(error?.code == .connectFailed)
        #expect(error?.repositoryError.kind == .unavailable)
        #expect(elapsed > 2.5, "connect_timeout=3 is waited out: \(elapsed) s")
    }

    @Test func invalidConninfoIsAServerFault() async {
        let pool = PGConnectionPool(conninfo: "host=x bogus_keyword=1")
        let error = await Self.sessionError(pool)
        #expect(error?.code == .invalidConninfo)
        #expect(error?.repositoryError.kind == .failed)
    }

    /// Why an empty session on `pool` failed, or nil.
    private static func sessionError(_ pool: PGConnectionPool) async -> StoreError? {
        await caughtAsync { () async throws(StoreError) in
            try await pool.withSession(before: .soon) { _ throws(StoreError) in }
        }
    }
}
