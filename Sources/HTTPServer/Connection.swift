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
    /// Starts every request id this server makes (see `RequestID`).
    let requestIDPrefix: String
    /// Called once, on the connection's queue, after its socket is closed.
    let onClose: @Sendable (Connection) -> Void
}

/// One client connection on Dispatch: the socket's sources, the TLS handshake, and carrying out what the
/// connection's protocol machine (`HTTP1ConnectionMachine`) decides. Every decision about requests, keep-alive
/// and deadlines is the machine's; this class only reads, writes, arms the timer and closes.
final class Connection: @unchecked Sendable {  // all mutable state is touched only on `queue`
    let id: Int
    let queue: DispatchQueue
    private let fd: Int32
    /// The client's `ip:port`, for logs.
    private let remoteAddress: String
    private let transport: any Transport
    private let environment: ConnectionEnvironment

    /// When the TLS handshake must be done.
    private let handshakeDeadline: Instant
    /// The protocol machine, from the end of the handshake (a stored optional, so events mutate it in place).
    private var http1: HTTP1ConnectionMachine?
    private var closed = false
    private var output = OutputBuffer()
    /// The request with the handler, since when, and the id its response echoes.
    private var inFlight: (request: HTTPRequest, startedAt: Instant)?
    private var requestID = ""
    /// Actions waiting to be carried out; see `run`.
    private var pendingActions: [HTTP1ConnectionMachine.Action] = []
    private var runningActions = false
    /// Reads resumed while actions ran: TLS may hold decrypted input that the socket will not signal again.
    private var readAfterActions = false

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
        if http1 == nil {
            close()
        } else {
            event { $0.drain() }
        }
    }

    /// Closes at once, abandoning any unsent output. Call on `queue`.
    func close() {
        guard !closed else { return }
        closed = true
        output.removeAll()
        pendingActions.removeAll()
        timer?.cancel()
        timer = nil
        // A suspended source never runs its cancel handler: resume before cancelling.
        resumeReads()
        resumeWrites()
        readSource?.cancel()
        writeSource?.cancel()
    }

    // MARK: - Events from the sources

    private func socketReadable() {
        guard !closed else { return }
        guard let http1 else { return continueHandshake() }
        if http1.wantsInput {
            readAvailable()
        } else if http1.state == .lingering {
            discardInput()
        } else {
            suspendReads()
        }
    }

    private func socketWritable() {
        guard !closed else { return }
        guard let http1 else { return continueHandshake() }
        if output.isEmpty && http1.wantsInput {
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
        guard http1 != nil else {
            if now >= handshakeDeadline { close() } else { arm(handshakeDeadline) }
            return
        }
        event { $0.timerFired(at: now) }
    }

    private func continueHandshake() {
        switch transport.handshake() {
        case .done:
            http1 = HTTP1ConnectionMachine(
                HTTP1ConnectionMachine.Configuration(
                    limits: environment.configuration.limits, timeouts: environment.configuration.timeouts,
                    maxRequestsPerConnection: environment.configuration.maxRequestsPerConnection),
                at: .now)
            event { $0.start() }
            readAvailable()
        case .wantRead:
            suspendWrites()
        case .wantWrite:
            resumeWrites()
        case .closed, .failed:
            close()
        }
    }

    // MARK: - Driving the machine

    /// Applies `change` to the machine and carries out the actions it returns.
    private func event(_ change: (inout HTTP1ConnectionMachine) -> [HTTP1ConnectionMachine.Action]) {
        guard !closed, http1 != nil else { return }
        run(change(&http1!))
    }

    /// Carries out `actions` in order. Actions may cause events (a ready response, drained output) whose actions
    /// queue behind these, so the machine's events are applied one at a time and the stack never grows with
    /// the number of pipelined requests.
    private func run(_ actions: [HTTP1ConnectionMachine.Action]) {
        pendingActions += actions
        guard !runningActions else { return }
        runningActions = true
        var index = 0
        while index < pendingActions.count {
            perform(pendingActions[index])
            index += 1
        }
        pendingActions.removeAll(keepingCapacity: true)
        runningActions = false
        if readAfterActions {
            readAfterActions = false
            if transport.hasBufferedInput { readAvailable() }
        }
    }

    private func perform(_ action: HTTP1ConnectionMachine.Action) {
        guard !closed else { return }
        switch action {
        case .handle(let request): handle(request)
        case .write(let bytes):
            output.append(bytes)
            flush()
        case .send(let response, let framing): send(response, framing)
        case .suspendReads: suspendReads()
        case .resumeReads:
            resumeReads()
            readAfterActions = true
        case .armTimer(let deadline): arm(deadline)
        case .linger: linger()
        case .close: close()
        }
    }

    // MARK: - Reading

    private static let readChunkBytes = 16 * 1024

    /// Reads while the machine wants input and the transport has some.
    private func readAvailable() {
        withUnsafeTemporaryAllocation(byteCount: Self.readChunkBytes, alignment: 1) { buffer in
            while !closed, http1?.wantsInput == true {
                switch transport.read(into: buffer) {
                case .done(let count):
                    let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                    event { $0.received(bytes, at: .now) }
                case .wantRead:
                    return
                case .wantWrite:
                    resumeWrites()
                    return
                case .closed:
                    event { $0.peerClosed() }
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
            while true {
                let outcome = try? Syscall.nonBlocking("recv") { recv(fd, scratch.baseAddress, scratch.count, 0) }
                switch outcome {
                case .done(let count) where count > 0: continue
                case .wouldBlock: return
                default:
                    event { $0.peerClosed() }
                    return
                }
            }
        }
    }

    // MARK: - Requests and responses

    /// Hands `request` to the handler under its request id: a ready answer at once, blocking work to a handler
    /// thread. The response comes back to this queue.
    private func handle(_ request: HTTPRequest) {
        let request = identified(request)
        let startedAt = Instant.now
        inFlight = (request, startedAt)
        switch environment.handler.plan(request) {
        case .ready(let response):
            event { $0.responseReady(response, at: .now) }
        case .blocking(let work):
            let accepted = environment.handlers.submit(
                run: {
                    let response = work()
                    self.queue.async { self.event { $0.responseReady(response, at: .now) } }
                },
                expire: { self.queue.async { self.event { $0.responseReady(Self.busy, at: .now) } } })
            if !accepted { event { $0.responseReady(Self.busy, at: .now) } }
        }
    }

    /// 503 for a request that found every handler thread taken for too long, or the queue full.
    private static let busy = HTTPResponse.error(
        .serviceUnavailable, "server busy", headers: HTTPHeaders([("Retry-After", "1")]))

    /// `request` with the id it is answered under in its `X-Request-Id`: the client's when acceptable,
    /// else a new one replacing whatever was there.
    private func identified(_ request: HTTPRequest) -> HTTPRequest {
        if let given = request.headers[RequestID.headerName], RequestID.isAcceptable(given) {
            requestID = given
            return request
        }
        var request = request
        requestID = newRequestID()
        request.headers.set(RequestID.headerName, requestID)
        return request
    }

    private func newRequestID() -> String {
        let served = http1?.requestsServed ?? 0
        return RequestID.stem(prefix: environment.requestIDPrefix, connectionID: id) + String(served + 1)
    }

    /// Reports the exchange to the observer, echoes the request id and writes the response.
    private func send(_ response: HTTPResponse, _ framing: HTTP1ConnectionMachine.Framing) {
        let answered = inFlight
        inFlight = nil
        if answered == nil { requestID = newRequestID() }
        let now = Instant.now
        environment.handler.observe(HTTPExchange(
            request: answered?.request, response: response, bodyBytes: framing.includesBody ? response.body.count : 0,
            seconds: answered.map { now.seconds(since: $0.startedAt) } ?? 0, remoteAddress: remoteAddress,
            requestID: requestID))
        var response = response
        response.headers.add(RequestID.headerName, requestID)
        var head = HTTPResponseSerializer.head(
            response, version: framing.version, keepAlive: framing.keepAlive, date: environment.dates.now)
        // Small bodies go out with the head in one write (one TLS record); large ones stay shared.
        if !framing.includesBody {
            output.append(head)
        } else if response.body.count <= 16 * 1024 {
            head.append(contentsOf: response.body)
            output.append(head)
        } else {
            output.append(head)
            output.append(response.body)
        }
        flush()
    }

    // MARK: - Writing

    /// Writes queued output until done or the socket is full, and tells the machine which.
    private func flush() {
        var progressed = false
        while !output.isEmpty {
            switch output.writeFirst({ transport.write($0) }) {
            case .done:
                progressed = true
            case .wantWrite, .wantRead:
                resumeWrites()
                event { $0.writeBlocked(progressed: progressed, at: .now) }
                return
            case .closed, .failed:
                close()
                return
            }
        }
        suspendWrites()
        event { $0.outputDrained(at: .now) }
    }

    /// Half-closes so the client sees the end of our output, then keeps reading (and dropping) its input.
    private func linger() {
        transport.shutdown()
        do {
            try Syscall.run("shutdown") { shutdown(fd, Int32(SHUT_WR)) }
        } catch {
            close()
        }
    }

    // MARK: - Sources

    private func arm(_ deadline: Instant) {
        timer?.schedule(deadline: deadline.dispatchTime, leeway: .milliseconds(100))
    }

    private func sourceCancelled() {
        openSources -= 1
        guard openSources == 0 else { return }
        readSource = nil
        writeSource = nil
        Glibc.close(fd)
        environment.onClose(self)
    }

    private func suspendReads() {
        guard !readSuspended, let readSource else { return }
        readSource.suspend()
        readSuspended = true
    }

    private func resumeReads() {
        guard readSuspended, let readSource else { return }
        readSource.resume()
        readSuspended = false
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
