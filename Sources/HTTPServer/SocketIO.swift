import Dispatch
import Syscalls
#if canImport(Glibc)
import Glibc
#endif

/// A connection's I/O on its socket: the transport (plain TCP or TLS), the socket's registration with its
/// queue's `ReadinessLoop`, and its timer. Used on the loop's queue only.
final class SocketIO: ConnectionIO, @unchecked Sendable {  // touched only on its loop's queue
    private let fd: Int32
    private let transport: any Transport
    private let loop: ReadinessLoop
    private var timer: (any DispatchSourceTimer)?

    init(fd: Int32, transport: any Transport, loop: ReadinessLoop) {
        self.fd = fd
        self.transport = transport
        self.loop = loop
    }

    /// Reports the socket's readiness and the timer to `events` from now on, until `close`.
    func start(reporting events: any ConnectionEvents) throws(SyscallError) {
        try loop.add(fd, events)
        let timer = DispatchSource.makeTimerSource(queue: loop.queue)
        // Strong (a weak reference would slow every retain of the connection): `close` cancels the timer, which
        // lets go of this handler and so of the connection.
        timer.setEventHandler { events.timerFired() }
        self.timer = timer
        timer.resume()
    }

    func readProxyHeader() -> ProxyHeaderReader.Outcome { ProxyHeaderReader.read(fd) }
    func handshake() -> IOResult { transport.handshake() }
    var negotiatedHTTP2: Bool { transport.negotiatedHTTP2 }
    func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult { transport.read(into: buffer) }
    var hasBufferedInput: Bool { transport.hasBufferedInput }

    func write(_ output: inout OutputBuffer) -> WriteOutcome {
        var written = 0
        while !output.isEmpty {
            switch transport.write(from: &output) {
            case .done(let count): written += count
            // The loop reports the socket writable again once it has room.
            case .wantWrite, .wantRead: return .blocked(written: written)
            case .closed, .failed: return .failed
            }
        }
        return .drained(written: written)
    }

    /// Reads past the transport: after the final response, nothing the client sends is looked at.
    func discardInput() -> IOResult {
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 1) { scratch in
            while true {
                let outcome = try? Syscall.nonBlocking("recv") { recv(fd, scratch.baseAddress, scratch.count, 0) }
                switch outcome {
                case .done(let count) where count > 0: continue
                case .wouldBlock: return .wantRead
                case .done: return .closed
                case nil: return .failed
                }
            }
        }
    }

    func arm(_ deadline: Instant) {
        timer?.schedule(deadline: deadline.dispatchTime, leeway: .milliseconds(100))
    }

    func shutdownOutput() -> Bool {
        transport.shutdown()
        return (try? Syscall.run("shutdown") { shutdown(fd, Int32(SHUT_WR)) }) != nil
    }

    func close() {
        timer?.cancel()
        timer = nil
        loop.remove(fd)
        Glibc.close(fd)
    }

    func abort() {
        // A zero linger time makes close() send a reset and drop the unsent bytes (socket(7), SO_LINGER).
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }
}
