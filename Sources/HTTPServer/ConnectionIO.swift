/// The I/O of one connection, which `Connection` drives: the socket's opening steps, reading, writing, the timer
/// and the end. `SocketIO` does it on a real socket; tests use a fake. Used on the connection's queue only.
protocol ConnectionIO: AnyObject {
    /// Reads a trusted proxy's PROXY header, if the connection starts with one.
    func readProxyHeader() -> ProxyHeaderReader.Outcome
    /// Takes the TLS handshake a step further (done at once for plain TCP).
    func handshake() -> IOResult
    /// Whether the handshake chose HTTP/2 (ALPN `h2`).
    var negotiatedHTTP2: Bool { get }
    func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult
    /// True when the transport holds input the socket will not report again (TLS).
    var hasBufferedInput: Bool { get }
    /// Writes `output` until it is empty or the socket is full.
    func write(_ output: inout OutputBuffer) -> WriteOutcome
    /// Reads and drops input until there is none (`.wantRead`) or the peer is gone (`.closed`, `.failed`).
    func discardInput() -> IOResult
    /// Fires the connection's `timerFired` at `deadline`, replacing any earlier arming.
    func arm(_ deadline: Instant)
    /// Half-closes our side (TLS close_notify, then a FIN); false if that failed.
    func shutdownOutput() -> Bool
    /// Stops the events and releases the socket.
    func close()
    /// Stops the events and releases the socket with a reset, dropping whatever the kernel still holds for the peer:
    /// for a peer that stopped reading, which would otherwise keep that memory for as long as it reads nothing.
    func abort()
}

/// Where a connection's I/O reports what happened: the socket's readiness (see `ReadinessLoop`) and the timer.
protocol ConnectionEvents: ReadinessClient {
    func timerFired()
}
