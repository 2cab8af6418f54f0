import HTTPCore

/// What a protocol driver needs from its connection: the I/O it does not do itself. Called on the connection's
/// queue only.
protocol ConnectionIO: AnyObject {
    /// Queues bytes for writing; `flush()` writes them.
    func write(_ bytes: ArraySlice<UInt8>)
    /// Writes queued output until it is all written (then the driver hears `outputDrained`) or the socket is
    /// full (then `writeBlocked`), or closes the connection on a write error.
    func flush()
    /// Bytes queued and not yet written.
    var queuedOutputBytes: Int { get }
    func suspendReads()
    func resumeReads()
    /// Reads input the transport already holds (TLS can hold decrypted bytes the socket will not signal).
    func readBufferedInput()
    /// Fires the driver's `timerFired` at `deadline` (replacing any earlier arming).
    func arm(_ deadline: Instant)
    /// Half-closes our side and drains input until the peer closes (RFC 9112 §9.6).
    func linger()
    func close()
}

/// One application protocol (HTTP/1.1 or HTTP/2) on a connection whose transport is ready: it is told what
/// happened on the socket and on the timer, and answers through `ConnectionIO`. Called on the connection's
/// queue only.
protocol ProtocolDriver: AnyObject {
    /// Whether the connection should read now.
    var wantsInput: Bool { get }
    /// Whether input is to be read and dropped (the connection is lingering).
    var isLingering: Bool { get }
    func start()
    func received(_ bytes: UnsafeRawBufferPointer, at now: Instant)
    func peerClosed(at now: Instant)
    /// Everything queued is written, the last `written` bytes of it since the last report.
    func outputDrained(written: Int, at now: Instant)
    /// A write could not finish (the socket is full) after `written` bytes went out.
    func writeBlocked(written: Int, at now: Instant)
    func timerFired(at now: Instant)
    /// The server is shutting down.
    func drain(at now: Instant)
    /// Whether the connection may be shed at the connection cap, and how it stands.
    func standing(at now: Instant) -> ConnectionStanding?
}
