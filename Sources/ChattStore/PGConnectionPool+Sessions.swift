/// A pooled connection lent to a suspended caller: its statements are sent and read by the pool's loop, and each
/// gives up at the caller's deadline (see `PGRoundTrip`).
struct PGSession: Sendable {
    let connection: PGConnection
    let loop: PGEventLoop
    /// When the caller stops waiting for the database.
    let deadline: ContinuousClock.Instant

    /// Runs one statement like `PGConnection.query(_:_:)`, suspending instead of blocking.
    /// - Throws: as `PGConnection.query(_:_:)`, or `.timedOut` at the deadline (the connection is then dropped).
    func query(_ sql: String, _ parameters: [String?] = []) async throws(StoreError) -> PGResult {
        let exchange = try await run(SingleQuery(sql, parameters)).get()
        return try (exchange.outcome ?? .failure(StoreError(.connectionLost))).get()
    }

    /// Runs `statement` in a transaction of its own, prepared on connections that keep prepared statements.
    /// - Throws: as `query(_:_:)`.
    func query(_ statement: PreparedStatement, _ parameters: [String?]) async throws(StoreError) -> PGResult {
        do {
            return try await queryCommitting(statement, parameters, executed: {})
        } catch {
            throw error.error
        }
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
            loop.execute { [self] in
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
        let outcome: Result<T, StoreError>
        do throws(StoreError) {
            outcome = .success(try await body(PGSession(connection: connection, loop: loop, deadline: deadline)))
        } catch {
            outcome = .failure(error)
        }
        // Back in the pool before the caller goes on, so that what it does next finds the connection there.
        await withCheckedContinuation { continuation in
            loop.execute {
                self.release(connection)
                continuation.resume()
            }
        }
        return try outcome.get()
    }
}
