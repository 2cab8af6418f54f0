import Dispatch
import HTTPCore
import Syscalls
#if canImport(Glibc)
import Glibc
#endif

/// What every connection of one server shares.
struct ConnectionEnvironment: Sendable {
    let configuration: ServerConfiguration
    let handler: HTTPHandler
    /// Where blocking plans run, so a blocking handler never stalls an I/O queue.
    let handlers: HandlerPool
    let dates: DateCache
    let statistics: ServerStatistics
    /// Starts every request id this server makes (see `RequestID`).
    let requestIDPrefix: String
    /// Called once, on the connection's queue, after its socket is closed.
    let onClose: @Sendable (Connection) -> Void
}

/// One client connection on Dispatch: the socket's sources, the TLS handshake and its deadline, the output
/// queue, and the protocol driver that takes over once the transport is ready. The driver decides everything
/// about requests; this class reads, writes, arms the timer and closes.
final class Connection: ConnectionIO, @unchecked Sendable {  // all mutable state is touched only on `queue`
    let id: Int
    let queue: DispatchQueue
    private let fd: Int32
    /// The client's `ip:port`, for logs.
    private let remoteAddress: String
    private let transport: any Transport
    private let environment: ConnectionEnvironment
    /// When the TLS handshake must be done; while `sniffed` waits for a plain connection's first bytes, when they
    /// must have come.
    private var handshakeDeadline: Instant

    /// The protocol, from the end of the handshake.
    private var driver: (any ProtocolDriver)?
    /// On plain HTTP with HTTP/2 on, the first bytes, until they show whether they begin the HTTP/2 preface.
    private var sniffed: [UInt8]?
    private var closed = false
    private var output = OutputBuffer()

    private var readSource: (any DispatchSourceRead)?
    private var writeSource: (any DispatchSourceWrite)?
    private var timer: (any DispatchSourceTimer)?
    private var readSuspended = false
    private var writeSuspended = true
    private var openSources = 2

    init(
        id: Int, fd: Int32, remoteAddress: String, queue: DispatchQueue, transport: any Transport,
        environment: ConnectionEnvironment
    ) {
        self.id = id
        self.fd = fd
        self.remoteAddress = remoteAddress
        self.queue = queue
        self.transport = transport
        self.environment = environment
        handshakeDeadline = .now + environment.configuration.timeouts.handshakeSeconds
    }

    /// Creates the sources and starts the handshake. Call on `queue`.
    func start() {
        let read = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        let write = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        read.setEventHandler { [unowned self] in self.socketReadable() }
        write.setEventHandler { [unowned self] in self.socketWritable() }
        timer.setEventHandler { [unowned self] in self.timerFired() }
        // The fd is closed only after both I/O sources have been cancelled; this also ends the retain cycle.
        read.setCancelHandler { self.sourceCancelled() }
        write.setCancelHandler { self.sourceCancelled() }
        readSource = read
        writeSource = write
        self.timer = timer
        read.resume()
        timer.resume()
        arm(handshakeDeadline)
        continueHandshake()
    }

    /// Asks the connection to finish what it is doing and close. Call on `queue`.
    func beginDrain() {
        guard !closed else { return }
        if let driver { driver.drain(at: .now) } else { close() }  // handshaking, or not yet speaking
    }

    // MARK: - ConnectionIO

    /// Closes at once, abandoning any unsent output. Call on `queue`.
    func close() {
        guard !closed else { return }
        closed = true
        output.removeAll()
        timer?.cancel()
        timer = nil
        // A suspended source never runs its cancel handler: resume before cancelling.
        resumeReads()
        resumeWrites()
        readSource?.cancel()
        writeSource?.cancel()
    }

    func write(_ bytes: ArraySlice<UInt8>) {
        guard !closed else { return }
        output.append(bytes)
    }

    var queuedOutputBytes: Int { output.byteCount }

    /// Writes queued output until done or the socket is full, and tells the driver which.
    func flush() {
        guard !closed else { return }
        var progressed = false
        while !output.isEmpty {
            switch output.writeSome({ transport.write($0) }) {
            case .done:
                progressed = true
            case .wantWrite, .wantRead:
                resumeWrites()
                driver?.writeBlocked(progressed: progressed, at: .now)
                return
            case .closed, .failed:
                close()
                return
            }
        }
        suspendWrites()
        driver?.outputDrained(at: .now)
    }

    func arm(_ deadline: Instant) {
        timer?.schedule(deadline: deadline.dispatchTime, leeway: .milliseconds(100))
    }

    func linger() {
        transport.shutdown()
        do {
            try Syscall.run("shutdown") { shutdown(fd, Int32(SHUT_WR)) }
        } catch {
            close()
        }
    }

    func readBufferedInput() {
        if transport.hasBufferedInput { readAvailable() }
    }

    func suspendReads() {
        guard !readSuspended, let readSource else { return }
        readSource.suspend()
        readSuspended = true
    }

    func resumeReads() {
        guard readSuspended, let readSource else { return }
        readSource.resume()
        readSuspended = false
    }

    // MARK: - Events from the sources

    private func socketReadable() {
        guard !closed else { return }
        if sniffed != nil { return readAvailable() }
        guard let driver else { return continueHandshake() }
        if driver.wantsInput {
            readAvailable()
        } else if driver.isLingering {
            discardInput()
        } else {
            suspendReads()
        }
    }

    private func socketWritable() {
        guard !closed else { return }
        if sniffed != nil { return suspendWrites() }
        guard let driver else { return continueHandshake() }
        if output.isEmpty && driver.wantsInput {
            // A TLS read wanted the socket writable; retry it.
            suspendWrites()
            readAvailable()
        } else {
            flush()
        }
    }

    private func timerFired() {
        guard !closed else { return }
        let now = Instant.now
        if let driver {
            driver.timerFired(at: now)
        } else if now >= handshakeDeadline {
            close()
        } else {
            arm(handshakeDeadline)
        }
    }

    private func continueHandshake() {
        switch transport.handshake() {
        case .done:
            if transport.negotiatedHTTP2 {
                startDriver(http2: true)
            } else if environment.configuration.tls == nil && environment.configuration.http2.enabled {
                sniffed = []
                // The header deadline, as either protocol would give a new connection for its first bytes.
                handshakeDeadline = .now + environment.configuration.timeouts.headerSeconds
                arm(handshakeDeadline)
            } else {
                startDriver(http2: false)
            }
            readAvailable()
        case .wantRead:
            suspendWrites()
        case .wantWrite:
            resumeWrites()
        case .closed, .failed:
            close()
        }
    }

    private func startDriver(http2: Bool) {
        let driver: any ProtocolDriver =
            http2
            ? HTTP2Driver(
                io: self, environment: environment, queue: queue, connectionID: id, remoteAddress: remoteAddress,
                at: .now)
            : HTTP1Driver(
                io: self, environment: environment, queue: queue, connectionID: id, remoteAddress: remoteAddress,
                at: .now)
        self.driver = driver
        driver.start()
    }

    /// Adds the first bytes of a plain connection to `sniffed` until they tell HTTP/2 with prior knowledge
    /// (the client preface, RFC 9113 §3.3) from HTTP/1.1, then starts that driver with them.
    private func sniff(_ bytes: UnsafeRawBufferPointer) {
        sniffed?.append(contentsOf: bytes)
        guard let seen = sniffed else { return }
        let preface = HTTP2ConnectionMachine.preface
        let compared = min(seen.count, preface.count)
        let matches = seen.prefix(compared).elementsEqual(preface.prefix(compared))
        guard !matches || compared == preface.count else { return }  // a prefix of the preface: read on
        sniffed = nil
        startDriver(http2: matches)
        seen.withUnsafeBytes { driver?.received($0, at: .now) }
    }

    // MARK: - Reading

    private static let readChunkBytes = 16 * 1024

    /// Reads while the driver wants input and the transport has some.
    private func readAvailable() {
        withUnsafeTemporaryAllocation(byteCount: Self.readChunkBytes, alignment: 1) { buffer in
            while !closed, driver?.wantsInput ?? (sniffed != nil) {
                switch transport.read(into: buffer) {
                case .done(let count):
                    let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                    if let driver { driver.received(bytes, at: .now) } else { sniff(bytes) }
                case .wantRead:
                    return
                case .wantWrite:
                    resumeWrites()
                    return
                case .closed:
                    if let driver { driver.peerClosed(at: .now) } else { close() }
                    return
                case .failed:
                    close()
                    return
                }
            }
        }
    }

    /// Reads and drops whatever the client still sends after the final response, until it closes.
    private func discardInput() {
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 1) { scratch in
            while !closed {
                let outcome = try? Syscall.nonBlocking("recv") { recv(fd, scratch.baseAddress, scratch.count, 0) }
                switch outcome {
                case .done(let count) where count > 0: continue
                case .wouldBlock: return
                default:
                    driver?.peerClosed(at: .now)
                    return
                }
            }
        }
    }

    // MARK: - Sources

    private func sourceCancelled() {
        openSources -= 1
        guard openSources == 0 else { return }
        readSource = nil
        writeSource = nil
        driver = nil
        Glibc.close(fd)
        environment.onClose(self)
    }

    private func suspendWrites() {
        guard !writeSuspended, let writeSource else { return }
        writeSource.suspend()
        writeSuspended = true
    }

    private func resumeWrites() {
        guard writeSuspended, let writeSource else { return }
        writeSource.resume()
        writeSuspended = false
    }
}
