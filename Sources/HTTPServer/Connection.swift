import Dispatch
import HTTPCore

#if canImport(Glibc)
import Glibc
#endif

/// What every connection of one server shares.
struct ConnectionEnvironment: Sendable {
    let configuration: ServerConfiguration
    let handler: HTTPHandler
    /// Where `handler.respond` runs when it may block, so a blocking handler never stalls an I/O queue.
    let handlers: HandlerPool
    let dates: DateCache
    /// Starts every request id this server makes (see `RequestID`).
    let requestIDPrefix: String
    /// Called once, on the connection's queue, after its socket is closed.
    let onClose: @Sendable (Connection) -> Void
}

/// One client connection: TLS handshake, request decoding, handing requests to the handler, writing
/// responses, keep-alive and deadlines. Requests on a connection are answered strictly in order.
final class Connection: @unchecked Sendable {  // all mutable state is touched only on `queue`
    enum State {
        case handshaking, reading, processing, writing, lingering, closed
    }

    let id: Int
    let queue: DispatchQueue
    let fd: Int32
    /// The client's `ip:port`, for logs.
    let remoteAddress: String
    let transport: any Transport
    let environment: ConnectionEnvironment
    var timeouts: ConnectionTimeouts { environment.configuration.timeouts }

    var state: State = .handshaking
    var decoder: HTTPRequestDecoder
    var output = OutputBuffer()
    var requestsServed = 0
    /// The id of the request being answered (see `Connection+Exchange.swift`).
    var requestID = ""
    /// Close (after lingering) once the output is written.
    var closeWhenWritten = false
    /// The server is shutting down: answer what is in flight, then close.
    var draining = false

    private var readSource: (any DispatchSourceRead)?
    private var writeSource: (any DispatchSourceWrite)?
    var timer: (any DispatchSourceTimer)?
    private var readSuspended = false
    private var writeSuspended = true
    private var openSources = 2

    // Deadline bookkeeping (see Connection+Deadlines.swift).
    let acceptedAt = DispatchTime.now()
    var requestStartedAt: DispatchTime?
    var lastProgressAt = DispatchTime.now()
    var scheduledDeadline = DispatchTime.distantFuture

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
        self.decoder = HTTPRequestDecoder(limits: environment.configuration.limits)
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
        continueHandshake()
    }

    func continueHandshake() {
        switch transport.handshake() {
        case .done:
            state = .reading
            lastProgressAt = .now()
            updateDeadline()
            readAvailable()
        case .wantRead:
            suspendWrites()
            updateDeadline()
        case .wantWrite:
            resumeWrites()
            updateDeadline()
        case .closed, .failed:
            close()
        }
    }

    private func socketReadable() {
        switch state {
        case .handshaking: continueHandshake()
        case .reading: readAvailable()
        case .lingering: discardInput()
        case .processing, .writing, .closed: suspendReads()
        }
    }

    private func socketWritable() {
        switch state {
        case .handshaking: continueHandshake()
        case .closed: break
        case .reading where output.isEmpty:
            // A TLS read wanted the socket writable; retry it.
            suspendWrites()
            readAvailable()
        default: flush()
        }
    }

    /// Asks the connection to finish what it is doing and close. Call on `queue`.
    func beginDrain() {
        draining = true
        switch state {
        case .handshaking: close()
        case .reading where !decoder.isMidRequest: close()
        default: break
        }
    }

    /// Closes at once, abandoning any unsent output. Call on `queue`.
    func close() {
        guard state != .closed else { return }
        state = .closed
        output.removeAll()
        timer?.cancel()
        timer = nil
        // A suspended source never runs its cancel handler: resume before cancelling.
        resumeReads()
        resumeWrites()
        readSource?.cancel()
        writeSource?.cancel()
    }

    private func sourceCancelled() {
        openSources -= 1
        guard openSources == 0 else { return }
        readSource = nil
        writeSource = nil
        Glibc.close(fd)
        environment.onClose(self)
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

    func suspendWrites() {
        guard !writeSuspended, let writeSource else { return }
        writeSource.suspend()
        writeSuspended = true
    }

    func resumeWrites() {
        guard writeSuspended, let writeSource else { return }
        writeSource.resume()
        writeSuspended = false
    }
}
