import Dispatch
import Locking
import TaskExecution

/// A pooled connection lent to a suspended caller: its statements are sent and read by the pool's loop, and each
/// gives up at the caller's deadline (see `PGRoundTrip`).
struct PGSession: Sendable {
    let connection: PGConnection
    let loop: PGEventLoop
    /// When the caller stops waiting for the database.
    let deadline: DispatchTime

    /// Runs one statement like `PGConnection.query(_:_:)`, suspending instead of blocking.
    /// - Throws: as `PGConnection.query(_:_:)`, or `.timedOut` at the deadline (the connection is then dropped).
    func query(_ sql: String, _ parameters: [String?] = []) async throws(StoreError) -> PGResult {
        let exchange = try await run(SingleQuery(sql, parameters)).get()
        return try (exchange.outcome ?? .failure(StoreError(.connectionLost))).get()
    }

    /// Runs `statement` in a transaction of its own and commits it in the same round trip (`CommittingQuery`);
    /// `executed` is told, on the loop, as soon as its rows are back.
    /// - Throws: the statement's failure, or the commit's (`committing`), or `.timedOut` at the deadline.
    func queryCommitting(
        _ statement: PreparedStatement, _ parameters: [String?], executed: @escaping @Sendable () -> Void
    ) async throws(PipelineFailure) -> PGResult {
        switch await run(CommittingQuery(statement, parameters, executed: executed)) {
        case .failure(let error):
            throw PipelineFailure(error: error, committing: false)
        case .success(let exchange):
            // Invariant: an exchange is over only once its outcome is known.
            return try exchange.outcome!.get()
        }
    }

    private func run<Exchange: PGExchange>(_ exchange: Exchange) async -> Result<Exchange, StoreError> {
        await withCheckedContinuation { continuation in
            loop.queue.async { [self] in
                PGRoundTrip.start(exchange, on: connection, loop: loop, deadline: deadline) {
                    continuation.resume(returning: $0)
                }
            }
        }
    }
}

extension PGConnectionPool {
    /// Lends a connection to `body` as a session whose statements give up at `deadline`, and takes it back
    /// afterwards, even if `body` throws. No thread blocks: waiting for a connection, opening one and every
    /// statement suspend the caller.
    /// - Throws: `.poolTimeout` when no connection is free within the acquire timeout (or by `deadline`, if
    ///   sooner), `.poolClosed`, `.backingOff`, `.connectFailed`, or whatever `body` throws.
    func withSession<T>(
        before deadline: ContinuousClock.Instant, _ body: (PGSession) async throws(StoreError) -> T
    ) async throws(StoreError) -> T {
        let connection = try await checkOut(before: min(deadline, .now + acquireTimeout))
        defer { checkIn(connection) }
        return try await body(PGSession(connection: connection, loop: loop, deadline: DispatchTime(deadline)))
    }

    /// Lends a connection until `checkIn`, waiting until `deadline` at most, without blocking a thread.
    func checkOut(before deadline: ContinuousClock.Instant) async throws(StoreError) -> PGConnection {
        // Dispatch arms the timers, for now.
        let limit = DispatchTime(deadline)
        let granted = await withCheckedContinuation { continuation in
            let once = ResumeOnce<PGConnection?>(continuation)
            switch claim(orWait: { once.resume($0) }) {
            case .refused(let error):
                once.resume(.failure(error))
            case .slot:
                once.resume(.success(nil))
            case .waiting(let id):
                loop.queue.asyncAfter(deadline: limit) {
                    if self.stopWaiting(id) { once.resume(.failure(StoreError(.poolTimeout))) }
                }
            }
        }
        if let connection = try granted.get() { return connection }
        return try await idleOrNewConnection(before: limit)
    }

    /// For a caller holding a slot: an idle connection, else a new one, opened on `connector` while the caller
    /// waits until `limit` at most. A connect that ends after the caller gave up puts its connection in the pool.
    private func idleOrNewConnection(before limit: DispatchTime) async throws(StoreError) -> PGConnection {
        if let connection = aliveIdleConnection() { return connection }
        let opened = await withCheckedContinuation { continuation in
            let once = ResumeOnce<PGConnection>(continuation)
            connector.async {
                do throws(StoreError) {
                    let connection = try self.connect()
                    if !once.resume(.success(connection)) { self.checkIn(connection) }
                } catch {
                    self.releaseSlot(keeping: nil)
                    once.resume(.failure(error))
                }
            }
            loop.queue.asyncAfter(deadline: limit) { once.resume(.failure(StoreError(.poolTimeout))) }
        }
        return try opened.get()
    }
}

/// Resumes a continuation with the first outcome offered; later ones are refused, so the caller can put what
/// they carry back where it belongs.
private final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Locked<CheckedContinuation<Result<Value, StoreError>, Never>?>

    init(_ continuation: CheckedContinuation<Result<Value, StoreError>, Never>) {
        self.continuation = Locked(continuation)
    }

    /// Resumes with `outcome` if nothing did yet; false when something did.
    @discardableResult
    func resume(_ outcome: Result<Value, StoreError>) -> Bool {
        let taken = continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }
        taken?.resume(returning: outcome)
        return taken != nil
    }
}
