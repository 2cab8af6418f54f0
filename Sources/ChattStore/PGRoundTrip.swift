/// What one round trip with the server sends, and how its answers are taken in; `PGRoundTrip` moves the bytes.
protocol PGExchange: Sendable {
    /// Queues everything this exchange sends, in non-blocking mode.
    mutating func send(on connection: PGConnection) throws(StoreError)
    /// Takes in the answers that have arrived; true once the exchange is over (or the connection broke).
    mutating func receive(on connection: PGConnection) -> Bool
    /// The exchange ends early with `error` (the connection failed, or the deadline passed); true when what was
    /// read already settles its outcome, which the caller then gets instead of the error.
    mutating func endedEarly(by error: StoreError) -> Bool
}

extension PGExchange {
    func endedEarly(by error: StoreError) -> Bool { false }
}

/// One exchange on a connection, sent and read without blocking: libpq's asynchronous API (`PQsendQueryParams`,
/// `PQflush`, `PQconsumeInput`, `PQisBusy`, `PQgetResult`) driven by the store's `PGEventLoop` as the socket
/// allows. At its deadline it gives up and abandons the connection: behind a silent network partition nothing
/// else would end the wait before the kernel's TCP timeouts, and the exchange's outcome is then unknown.
final class PGRoundTrip<Exchange: PGExchange>: @unchecked Sendable {  // touched only on `loop.queue`
    private var exchange: Exchange
    private let connection: PGConnection
    private let loop: PGEventLoop
    private let socket: Int32
    private var complete: ((Result<Exchange, StoreError>) -> Void)?
    private var deadlineTimer: LoopTimers.ID?

    private init(
        _ exchange: Exchange, on connection: PGConnection, loop: PGEventLoop,
        complete: @escaping (Result<Exchange, StoreError>) -> Void
    ) {
        self.exchange = exchange
        self.connection = connection
        self.loop = loop
        self.complete = complete
        socket = connection.socket
    }

    /// Sends `exchange` on `connection` and calls `complete` on `loop.queue` with it once it is over (its answers
    /// taken in), or with why it ended early: it could not be sent, the socket failed, or `.timedOut` at
    /// `deadline`. Call on `loop.queue`.
    static func start(
        _ exchange: Exchange, on connection: PGConnection, loop: PGEventLoop, deadline: ContinuousClock.Instant,
        complete: @escaping (Result<Exchange, StoreError>) -> Void
    ) {
        let trip = PGRoundTrip(exchange, on: connection, loop: loop, complete: complete)
        do throws(StoreError) {
            try trip.exchange.send(on: connection)
        } catch {
            return trip.finish(.failure(error))
        }
        trip.deadlineTimer = loop.timers.schedule(at: deadline) { trip.expire() }
        trip.socketReady()
    }

    /// Sends what is left to send, takes in what has arrived, and finishes once the exchange is over; else
    /// watches the socket for whatever it waits for.
    private func socketReady() {
        guard complete != nil else { return }
        do throws(StoreError) {
            let sent = try connection.flushOutput()
            if exchange.receive(on: connection) { return finish(.success(exchange)) }
            // The loop holds the round trip until `finish` unwatches the socket.
            guard loop.watch(socket, writable: !sent, { self.socketReady() }) else {
                throw StoreError(.connectionLost, detail: "socket closed")
            }
        } catch {
            endEarly(by: error)
        }
    }

    /// The deadline passed first: the connection is given up, whatever it may still bring.
    private func expire() {
        guard complete != nil else { return }
        connection.abandon()
        endEarly(by: StoreError(.timedOut))
    }

    private func endEarly(by error: StoreError) {
        finish(exchange.endedEarly(by: error) ? .success(exchange) : .failure(error))
    }

    private func finish(_ result: Result<Exchange, StoreError>) {
        loop.timers.cancel(deadlineTimer)
        loop.unwatch(socket)
        connection.exchangeEnded()
        let complete = self.complete
        self.complete = nil
        complete?(result)
    }
}

/// One statement and its result.
struct SingleQuery: PGExchange {
    let sql: String
    let parameters: [String?]
    /// The first failure, else the last result; nil until one arrives.
    private(set) var outcome: Result<PGResult, StoreError>?

    init(_ sql: String, _ parameters: [String?]) {
        self.sql = sql
        self.parameters = parameters
    }

    func send(on connection: PGConnection) throws(StoreError) {
        try connection.send(sql, parameters)
    }

    mutating func receive(on connection: PGConnection) -> Bool {
        connection.readResults(into: &outcome)
    }
}
