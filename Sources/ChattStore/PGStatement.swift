import CLibPQ
import Dispatch

/// One statement on a connection, sent and read without blocking: libpq's asynchronous API (`PQsendQueryParams`,
/// `PQflush`, `PQconsumeInput`, `PQisBusy`, `PQgetResult`) driven by the store's `PGEventLoop` as the socket
/// allows. At its deadline it gives up and abandons the connection: behind a silent network partition nothing
/// else would end the wait before the kernel's TCP timeouts, and the statement's outcome is then unknown.
final class PGStatement: @unchecked Sendable {  // touched only on `loop.queue`
    private let connection: PGConnection
    private let loop: PGEventLoop
    private let socket: Int32
    private var outcome: Result<PGResult, StoreError>?
    private var complete: ((Result<PGResult, StoreError>) -> Void)?

    private init(
        _ connection: PGConnection, loop: PGEventLoop, complete: @escaping (Result<PGResult, StoreError>) -> Void
    ) {
        self.connection = connection
        self.loop = loop
        self.complete = complete
        socket = connection.socket
    }

    /// Sends `sql` with `parameters` on `connection` and calls `complete` on `loop.queue` with its result, the
    /// failure the server reported, a lost connection, or `.timedOut` at `deadline`. Call on `loop.queue`.
    static func start(
        _ sql: String, _ parameters: [String?], on connection: PGConnection, loop: PGEventLoop,
        deadline: DispatchTime, complete: @escaping (Result<PGResult, StoreError>) -> Void
    ) {
        let statement = PGStatement(connection, loop: loop, complete: complete)
        do throws(StoreError) {
            try connection.send(sql, parameters)
        } catch {
            return statement.finish(.failure(error))
        }
        loop.queue.asyncAfter(deadline: deadline) { [weak statement] in statement?.expire() }
        statement.socketReady()
    }

    /// Sends what is left to send, reads what has arrived, and finishes once the result is complete; else
    /// watches the socket for whatever it waits for.
    private func socketReady() {
        guard complete != nil else { return }
        do throws(StoreError) {
            let sent = try connection.flushOutput()
            if connection.readResults(into: &outcome) {
                return finish(outcome ?? .failure(StoreError(.connectionLost)))
            }
            // The loop holds the statement until `finish` unwatches the socket.
            guard loop.watch(socket, writable: !sent, { self.socketReady() }) else {
                throw StoreError(.connectionLost, detail: "socket closed")
            }
        } catch {
            finish(.failure(error))
        }
    }

    /// The deadline passed first: the connection is given up, whatever it may still bring.
    private func expire() {
        guard complete != nil else { return }
        connection.abandon()
        finish(.failure(StoreError(.timedOut)))
    }

    private func finish(_ result: Result<PGResult, StoreError>) {
        loop.unwatch(socket)
        connection.statementEnded()
        let complete = self.complete
        self.complete = nil
        complete?(result)
    }
}
