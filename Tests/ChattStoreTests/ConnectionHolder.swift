@testable import ChattStore
import Testing

/// Keeps one of a pool's connections lent, as a session in a task of its own, until released.
final class ConnectionHolder: Sendable {
    private let held: Promise<Bool>
    private let letGoSignal: Promise<Void>
    private let holding: Task<Void, Never>

    /// Borrows a connection from `pool`, runs `setUp` on it, and holds it (at most 10 s) until `letGo()` or
    /// `release()`; `tearDown` runs before the connection goes back.
    init(
        _ pool: PGConnectionPool,
        setUp: @escaping @Sendable (PGSession) async throws(StoreError) -> Void = { _ in },
        tearDown: @escaping @Sendable (PGSession) async -> Void = { _ in }
    ) {
        let (held, letGoSignal) = (Promise<Bool>(), Promise<Void>())
        (self.held, self.letGoSignal) = (held, letGoSignal)
        holding = Task {
            _ = try? await pool.withSession(before: .now + .seconds(15)) { session throws(StoreError) in
                try await setUp(session)
                held.fulfil(true)
                _ = await letGoSignal.value(within: .seconds(10))
                await tearDown(session)
            }
            held.fulfil(false)
        }
    }

    /// Whether the connection was taken and set up within 5 s.
    func waitUntilHeld() async -> Bool {
        await held.value(within: .seconds(5)) == true
    }

    /// Lets the connection go, without waiting for it to be back in the pool; later calls do nothing.
    func letGo() {
        letGoSignal.fulfil(())
    }

    /// Lets the connection go and waits until it is back in the pool.
    func release() async {
        letGo()
        await holding.value
    }

    /// Holds a connection to `database` inside a transaction that has `chatts` locked against everyone.
    static func lockingChatts(in database: TestDatabase) async throws -> ConnectionHolder {
        let holder = ConnectionHolder(
            database.pool(size: 1),
            setUp: { session throws(StoreError) in
                _ = try await session.query("BEGIN")
                _ = try await session.query("LOCK TABLE chatts IN ACCESS EXCLUSIVE MODE")
            },
            tearDown: { session in _ = try? await session.query("ROLLBACK") })
        try #require(await holder.waitUntilHeld())
        return holder
    }
}
