import ChattModel
@testable import ChattStore
import Foundation
import Testing

/// Failures that need no running database, so they always run.
@Suite struct UnreachableDatabaseTests {
    @Test(arguments: [
        "host=127.0.0.1 port=1 dbname=chatterd user=chatterd",
        "postgresql:///chatterd?host=/nonexistent-chatterd-sockets&port=5999",
    ])
    func unreachableDatabaseIsUnavailableQuickly(conninfo: String) throws {
        let pool = PGConnectionPool(conninfo: conninfo)
        let repository = PostgresChattRepository(pool: pool)
        var error: RepositoryError?
        let elapsed = seconds {
            error = caught { () throws(RepositoryError) in try repository.add(NewChatt(name: "a", message: "b")) }
        }
        #expect(error?.kind == .unavailable)
        #expect(elapsed < 1, "\(elapsed) s")
        // Right after a failed connect the pool backs off instead of trying again...
        let second = caught { () throws(StoreError) in try pool.withConnection { _ in } }
        #expect(second?.code == .backingOff)
        #expect(second?.repositoryError.kind == .unavailable)
        // ...and tries again once the first wait (0.1 s) is over.
        Thread.sleep(forTimeInterval: 0.15)
        let third = caught { () throws(StoreError) in try pool.withConnection { _ in } }
        #expect(third?.code == .connectFailed)
        #expect(pool.stats == PGConnectionPool.Stats(size: 4, inUse: 0, idle: 0))
    }

    @Test func hungServerTimesOutWithinTheConnectTimeout() throws {
        let listener = try SilentListener()
        let repository = PostgresChattRepository(
            pool: PGConnectionPool(conninfo: "host=127.0.0.1 port=\(listener.port) dbname=x user=x"))
        var error: RepositoryError?
        let elapsed = seconds { error = caught { () throws(RepositoryError) in try repository.ping() } }
        #expect(error?.kind == .unavailable)
        #expect(elapsed > 2.5 && elapsed < 4.5, "connect_timeout=3 bounds the wait: \(elapsed) s")
    }

    @Test func invalidConninfoIsAServerFault() {
        let pool = PGConnectionPool(conninfo: "host=x bogus_keyword=1")
        let error = caught { () throws(StoreError) in try pool.withConnection { _ in } }
        #expect(error?.code == .invalidConninfo)
        #expect(error?.repositoryError.kind == .failed)
    }
}
