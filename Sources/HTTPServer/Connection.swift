import Dispatch
import HTTPCore
import Syscalls
#if canImport(Glibc)
import Glibc
#endif

/// One client connection on Dispatch: its socket's readiness (from its queue's `ReadinessLoop`), the TLS
/// handshake and its deadline, the output queue, and the protocol driver that takes over once the transport is
/// ready. The driver decides everything about requests; this class reads, writes, arms the timer and closes.
final class Connection: ConnectionIO, ReadinessClient, @unchecked Sendable {  // touched only on `queue`
    let id: Int
    let queue: DispatchQueue
    private let loop: ReadinessLoop
    private let fd: Int32
    /// Who the requests are from: the peer, or the client a trusted proxy names.
    private var identity: ClientIdentity
    /// The address this connection is counted under in `environment.clients`, once admitted.
    private var admitted: IPAddress?
    /// A trusted proxy's connection, until its PROXY header (or the lack of one) is read.
    private var awaitingProxyHeader: Bool
    private let transport: any Transport
    private let environment: ConnectionEnvironment
    /// When the TLS handshake must be done; while `sniffed` waits for a plain connection's first bytes, when they
    /// must have come.
    private var handshakeDeadline: Instant
    private let openedAt: Instant

    /// The protocol, from the end of the handshake.
    private var driver: (any ProtocolDriver)?
    /// On plain HTTP with HTTP/2 on, the first bytes, until they show whether they begin the HTTP/2 preface.
    private var sniffed: [UInt8]?
    private var closed = false
    private var output = OutputBuffer()

    private var timer: (any DispatchSourceTimer)?
    /// The driver does not want input now; readiness is remembered in `mayHaveInput`.
    private var readsSuspended = false
    /// The socket may hold input not read yet: it became readable, or the last read stopped before it
    /// would block. The loop is edge-triggered, so this is the only memory of it.
    private var mayHaveInput = true
    /// A TLS read asked for the socket to be writable first.
    private var readWaitsForWritable = false
    /// `readAvailable` is on the stack: what the driver does meanwhile must not start another read loop, or
    /// a client that sends each request as soon as it has the last answer would deepen the stack without end.
    private var reading = false

    init(
        id: Int, fd: Int32, peer: ClientAddress, admitted: IPAddress?, loop: ReadinessLoop,
        transport: any Transport, environment: ConnectionEnvironment
    ) {
        self.id = id
        self.loop = loop
        self.fd = fd
        self.admitted = admitted
        // A trusted proxy's PROXY header, if it sends one, names the client.
        awaitingProxyHeader = environment.configuration.trustedProxies.contains { $0.contains(peer.ip) }
        identity = ClientIdentity(connection: peer, forwardingProxies: [])
        queue = loop.queue
        self.transport = transport
        self.environment = environment
        openedAt = .now
        handshakeDeadline = openedAt + environment.configuration.timeouts.handshakeSeconds
    }

    /// Registers the socket with the loop and starts the handshake. Call on `queue`.
    func start() {
        do {
            try loop.add(fd, self)
        } catch {
            return finish()
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in self.timerFired() }
        self.timer = timer
        timer.resume()
        arm(handshakeDeadline)
        if awaitingProxyHeader { readProxyHeader() } else { continueHandshake() }
    }

    /// Asks the connection to finish what it is doing and close. Call on `queue`.
    func beginDrain() {
        guard !closed else { return }
        if let driver { driver.drain(at: .now) } else { close() }  // handshaking, or not yet speaking
    }

    /// Whether this connection may be shed at the connection cap, and how it stands. Call on `queue`.
    func standing(at now: Instant) -> ConnectionStanding? {
        guard !closed else { return nil }
        if let driver { return driver.standing(at: now) }
        // A handshake, a PROXY header or the first bytes of a plain connection: nothing asked of the server yet.
        return .idle(since: openedAt, at: now, timeouts: environment.configuration.timeouts)
    }

    /// Closes the connection to let a waiting client in, if it may still be shed; false if it may not any more.
    /// Call on `queue`.
    func shed(at now: Instant) -> Bool {
        guard standing(at: now) != nil else { return false }
        environment.statistics.connectionShed()
        close()
        return true
    }

    // MARK: - ConnectionIO

    /// Closes at once, abandoning any unsent output. Call on `queue`.
    func close() {
        guard !closed else { return }
        closed = true
        output.removeAll()
        timer?.cancel()
        timer = nil
        loop.remove(fd)
        finish()
    }

    /// Releases the socket and reports the connection closed.
    private func finish() {
        closed = true
        // A handler thread may still hold the driver, and through it this connection; break that cycle.
        driver = nil
        if let admitted { environment.clients.release(admitted) }
        Glibc.close(fd)
        environment.onClose(self)
    }

    func write(_ bytes: ArraySlice<UInt8>) {
        guard !closed else { return }
        output.append(bytes)
    }

    var queuedOutputBytes: Int { output.byteCount }

    /// Writes queued output until done or the socket is full, and tells the driver which.
    func flush() {
        guard !closed else { return }
        var written = 0
        while !output.isEmpty {
            switch output.writeSome({ transport.write($0) }) {
            case .done(let count):
                written += count
            case .wantWrite, .wantRead:
                // The loop reports the socket writable again once it has room.
                driver?.writeBlocked(written: written, at: .now)
                return
            case .closed, .failed:
                close()
                return
            }
        }
        driver?.outputDrained(written: written, at: .now)
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
        // Inside a read loop, that loop reads on once the driver wants input again.
        guard !reading else { return }
        if !readsSuspended, mayHaveInput || transport.hasBufferedInput { readAvailable() }
    }

    func suspendReads() {
        readsSuspended = true
    }

    func resumeReads() {
        readsSuspended = false
    }

    // MARK: - Events from the sources

    func socketReadable() {
        mayHaveInput = true
        guard !closed else { return }
        if awaitingProxyHeader { return readProxyHeader() }
        if sniffed != nil { return readAvailable() }
        guard let driver else { return continueHandshake() }
        guard !readsSuspended else { return }  // remembered in mayHaveInput until reads resume
        if driver.wantsInput {
            readAvailable()
        } else if driver.isLingering {
            discardInput()
        }
    }

    func socketWritable() {
        guard !closed, !awaitingProxyHeader, sniffed == nil else { return }
        guard driver != nil else { return continueHandshake() }
        if readWaitsForWritable {
            readWaitsForWritable = false
            readAvailable()
        }
        if !output.isEmpty { flush() }
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
        case .wantRead, .wantWrite:
            break  // the loop reports the socket ready again
        case .closed, .failed:
            close()
        }
    }

    private func startDriver(http2: Bool) {
        let driver: any ProtocolDriver =
            http2
            ? HTTP2Driver(
                io: self, environment: environment, queue: queue, connectionID: id, identity: identity, at: .now)
            : HTTP1Driver(
                io: self, environment: environment, queue: queue, connectionID: id, identity: identity, at: .now)
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

    /// Reads a trusted proxy's PROXY header, if there is one (see `ProxyHeaderReader`), then goes on to the
    /// handshake.
    private func readProxyHeader() {
        switch ProxyHeaderReader.read(fd) {
        case .incomplete:
            return  // the loop reports the socket again when more arrives
        case .unusable:
            return close()
        case .absent:
            // A proxy that sends no header forwards clients per request, in X-Forwarded-For.
            identity.forwardingProxies = environment.configuration.trustedProxies
        case .header(let client, let port):
            if let client {
                identity.connection = ClientAddress(ip: client, port: port)
                guard environment.clients.admit(client) else {
                    environment.statistics.connectionRefused(reason: "client_connection_limit")
                    return close()
                }
                admitted = client
            }
        }
        awaitingProxyHeader = false
        continueHandshake()
    }

    // MARK: - Reading

    private static let readChunkBytes = 16 * 1024

    /// Reads while the driver wants input and the transport has some.
    private func readAvailable() {
        guard !reading else { return }
        reading = true
        defer { reading = false }
        withUnsafeTemporaryAllocation(byteCount: Self.readChunkBytes, alignment: 1) { buffer in
            while !closed, !readsSuspended, driver?.wantsInput ?? (sniffed != nil) {
                switch transport.read(into: buffer) {
                case .done(let count):
                    let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                    if let driver { driver.received(bytes, at: .now) } else { sniff(bytes) }
                case .wantRead:
                    mayHaveInput = false
                    return
                case .wantWrite:
                    readWaitsForWritable = true
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
                case .wouldBlock:
                    mayHaveInput = false
                    return
                default:
                    driver?.peerClosed(at: .now)
                    return
                }
            }
        }
    }
}
