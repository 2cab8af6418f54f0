import CLibPQ

/// The steps of libpq's asynchronous query API that `PGRoundTrip` takes as the socket allows. None blocks.
extension PGConnection {
    /// Puts the connection in non-blocking mode, for good: a pooled connection is only ever driven by the loop.
    /// - Throws: libpq's failure.
    func makeNonBlocking() throws(StoreError) {
        guard PQsetnonblocking(handle, 1) == 0 else { throw failureWithoutResult() }
    }

    /// The connection's socket, for the loop to watch.
    var socket: Int32 {
        PQsocket(handle)
    }

    /// Queues one statement with text parameters; `flushOutput` sends it.
    /// - Throws: `.invalidParameter` for a value containing NUL, or libpq's failure (`.connectionLost` when the
    ///   connection is broken).
    func send(_ sql: String, _ parameters: [String?]) throws(StoreError) {
        try Self.refuseNUL(in: parameters)
        let values = CStringArray(parameters)
        let queued = values.withPointers { pointers in
            PQsendQueryParams(handle, sql, Int32(pointers.count), nil, pointers, nil, nil, 0)
        }
        guard queued == 1 else { throw failureWithoutResult() }
    }

    /// Sends what libpq holds, as far as the socket takes it; true once everything is sent.
    func flushOutput() throws(StoreError) -> Bool {
        switch PQflush(handle) {
        case 0: return true
        case 1: return false
        default: throw failureWithoutResult()
        }
    }

    /// Reads what has arrived and takes in every complete result: `outcome` keeps the first failure, else the
    /// last result. True once the statement's results are all in (or the connection broke).
    func readResults(into outcome: inout Result<PGResult, StoreError>?) -> Bool {
        func keep(_ next: Result<PGResult, StoreError>) {
            if case .failure? = outcome { return }
            outcome = next
        }
        guard PQconsumeInput(handle) == 1 else {
            keep(.failure(failureWithoutResult()))
            return true
        }
        while PQisBusy(handle) == 0 {
            guard let result = PQgetResult(handle) else { return true }
            keep(Result { () throws(StoreError) in try checked(result) })
        }
        return false
    }

    /// Marks the connection as given up: it is closed when it goes back to the pool.
    func abandon() {
        isAbandoned = true
    }

    /// Out of pipeline mode (if in it, and every result is read), for the next exchange.
    func exchangeEnded() {
        guard !isAbandoned else { return }
        // Fails only with results left unread, when the connection is broken: isReusable then drops it.
        _ = PQexitPipelineMode(handle)
    }
}
