@testable import ChattStore
import Dispatch
import Foundation
import Locking
import Testing

/// Keeps one of a pool's connections busy on another thread until released.
final class ConnectionHolder: Sendable {
    private let held = DispatchSemaphore(value: 0)
    private let releaseSignal = DispatchSemaphore(value: 0)
    private let finished = DispatchGroup()
    private let isReleased = Locked(false)

    /// Borrows a connection from `pool`, runs `setUp` on it, and holds it (at most 10 s) until `release()`;
    /// `tearDown` runs before the connection goes back.
    init(
        _ pool: PGConnectionPool,
        setUp: @escaping @Sendable (PGConnection) throws(StoreError) -> Void = { _ in },
        tearDown: @escaping @Sendable (PGConnection) -> Void = { _ in }
    ) {
        finished.enter()
        Thread { [held, releaseSignal, finished] in
            _ = try? pool.withConnection { connection throws(StoreError) in
                try setUp(connection)
                held.signal()
                _ = releaseSignal.wait(timeout: .now() + 10)
                tearDown(connection)
            }
            finished.leave()
        }.start()
    }

    /// Whether the connection was taken and set up within 5 s.
    func waitUntilHeld() -> Bool {
        held.wait(timeout: .now() + 5) == .success
    }

    /// Lets the connection go and waits until it is back in the pool; later calls do nothing.
    func release() {
        guard isReleased.withLock({ released in defer { released = true }; return !released }) else { return }
        releaseSignal.signal()
        finished.wait()
    }

    /// Holds a connection to `database` inside a transaction that has `chatts` locked against everyone.
    static func lockingChatts(in database: TestDatabase) throws -> ConnectionHolder {
        let holder = ConnectionHolder(
            database.pool(size: 1),
            setUp: { connection throws(StoreError) in
                _ = try connection.query("BEGIN")
                _ = try connection.query("LOCK TABLE chatts IN ACCESS EXCLUSIVE MODE")
            },
            tearDown: { connection in _ = try? connection.query("ROLLBACK") })
        try #require(holder.waitUntilHeld())
        return holder
    }
}
