import Dispatch
import HTTPCore

/// Carries out what `HTTP2ConnectionMachine` decides: each stream's request to the handler and its response
/// back with a request id, errors answered and reported, frames pulled from the session and written through
/// `ConnectionIO` while the connection's output bound allows.
final class HTTP2Driver: ProtocolDriver, @unchecked Sendable {  // touched only on `queue`
    typealias Action = HTTP2ConnectionMachine.Action

    private let machine: HTTP2ConnectionMachine
    // Strong, as in HTTP1Driver: a handler thread may hold the driver after the connection closed.
    private let io: any ConnectionIO
    private let environment: ConnectionEnvironment
    private let queue: DispatchQueue
    private let connectionID: Int
    /// Who each request is from.
    private let identity: ClientIdentity
    /// Requests with the handler, by stream: the request (with its id), since when, and from whom.
    private var inFlight: [Int32: (request: HTTPRequest, startedAt: Instant, client: ClientAddress)] = [:]
    private var requestsSeen = 0
    /// Open streams as last reported to the statistics.
    private var reportedStreams = 0
    private var pumping = false
    private var pumpAgain = false
    /// Reads were resumed while pumping: input the transport holds already is read once the pump is done.
    private var readsResumed = false
    private var closed = false

    init(
        io: any ConnectionIO, environment: ConnectionEnvironment, queue: DispatchQueue, connectionID: Int,
        identity: ClientIdentity, at now: Instant
    ) {
        self.io = io
        self.environment = environment
        self.queue = queue
        self.connectionID = connectionID
        self.identity = identity
        let configuration = environment.configuration
        machine = HTTP2ConnectionMachine(
            limits: configuration.limits, timeouts: configuration.timeouts, configuration: configuration.http2,
            maxStreams: configuration.maxRequestsPerConnection, at: now)
        environment.statistics.http2ConnectionOpened()
    }

    deinit {
        environment.statistics.http2StreamsChanged(by: -reportedStreams)
        environment.statistics.http2ConnectionClosed()
    }

    var wantsInput: Bool { !closed && machine.wantsInput }
    var isLingering: Bool { !closed && machine.phase == .lingering }

    func start() {
        run(machine.start())
        pump()
    }

    func received(_ bytes: UnsafeRawBufferPointer, at now: Instant) {
        run(machine.received(bytes, at: now))
        pump()
    }

    func peerClosed(at now: Instant) { run(machine.peerClosed()) }

    func outputDrained(written: Int, at now: Instant) {
        machine.wrote(written)
        // Called from inside `pump`'s flush too: the pump loop then goes on, instead of recursing.
        if pumping {
            pumpAgain = true
        } else {
            pump()
        }
    }

    func writeBlocked(written: Int, at now: Instant) { run(machine.writeBlocked(written: written, at: now)) }

    func timerFired(at now: Instant) {
        run(machine.timerFired(at: now))
        pump()
    }

    func drain(at now: Instant) {
        run(machine.drain())
        pump()
    }

    func standing(at now: Instant) -> ConnectionStanding? { closed ? nil : machine.standing(at: now) }

    /// Pulls frames from the session while there is room in the connection's output, and writes them; when
    /// everything is written and nothing more comes, tells the machine.
    private func pump() {
        guard !pumping else { return }
        pumping = true
        defer { pumping = false }
        repeat {
            pumpAgain = false
            while !closed {
                let room = environment.configuration.http2.maxQueuedOutputBytes - io.queuedOutputBytes
                let (chunks, actions) = machine.produce(room: room, at: .now)
                for chunk in chunks { io.write(chunk) }
                run(actions)
                guard !chunks.isEmpty else { break }
            }
            guard !closed else { return }
            if io.queuedOutputBytes > 0 {
                io.flush()
            } else {
                run(machine.outputDrained(more: false, at: .now))
            }
        } while pumpAgain && !closed
        reportStreams()
        if readsResumed, !closed {
            readsResumed = false
            io.readBufferedInput()
        }
    }

    /// Brings the open-streams gauge up to date.
    private func reportStreams() {
        let open = machine.openStreamCount
        guard open != reportedStreams else { return }
        environment.statistics.http2StreamsChanged(by: open - reportedStreams)
        reportedStreams = open
    }

    private func run(_ actions: [Action]) {
        for action in actions where !closed {
            switch action {
            case .handle(let request, let stream): handle(request, on: stream)
            case .reject(let response, let stream): reject(response, on: stream)
            case .countGoaway(let code): environment.statistics.http2GoawaySent(code: code)
            case .armTimer(let deadline): io.arm(deadline)
            case .resumeReads:
                io.resumeReads()
                readsResumed = true
            case .linger:
                io.linger()
                io.resumeReads()
            case .close:
                closed = true
                io.close()
            }
        }
    }

    private func handle(_ request: HTTPRequest, on stream: Int32) {
        let (request, client) = identity.marked(identified(request))
        inFlight[stream] = (request, .now, client)
        environment.answer(request, on: queue) { response in
            self.respond(response, on: stream)
            self.pump()
        }
    }

    private func respond(_ response: HTTPResponse, on stream: Int32) {
        guard let (request, startedAt, client) = inFlight.removeValue(forKey: stream) else { return }
        let requestID = request.headers[RequestID.headerName] ?? ""
        report(request: request, response, requestID: requestID, since: startedAt, client: client)
        guard !closed else { return }
        var response = response
        response.headers.add(RequestID.headerName, requestID)
        machine.responseReady(response, on: stream, date: environment.dates.now)
    }

    /// An error for a stream whose request was never handed out: reported like an unreadable HTTP/1.1 request.
    private func reject(_ response: HTTPResponse, on stream: Int32) {
        requestsSeen += 1
        let requestID = environment.requestID(connection: connectionID, sequence: requestsSeen)
        report(
            request: nil, response, requestID: requestID, since: .now, client: identity.connection,
            head: machine.rejectsHead(stream))
        var response = response
        response.headers.add(RequestID.headerName, requestID)
        machine.respond(toRejected: response, on: stream, date: environment.dates.now)
    }

    private func report(
        request: HTTPRequest?, _ response: HTTPResponse, requestID: String, since startedAt: Instant,
        client: ClientAddress, head: Bool = false
    ) {
        let includesBody = response.sendsBody(inAnswerTo: request?.method ?? (head ? .HEAD : .GET))
        environment.handler.observe(HTTPExchange(
            request: request, response: response, bodyBytes: includesBody ? response.body.count : 0,
            seconds: Instant.now.seconds(since: startedAt), remoteAddress: client.text, requestID: requestID,
            version: .http2))
    }

    /// `request` with the id it is answered under in its `x-request-id`: the client's when acceptable, else a
    /// new one replacing whatever was there.
    private func identified(_ request: HTTPRequest) -> HTTPRequest {
        requestsSeen += 1
        if let given = request.headers[RequestID.headerName], RequestID.isAcceptable(given) { return request }
        var request = request
        request.headers.set(RequestID.headerName, environment.requestID(connection: connectionID, sequence: requestsSeen))
        return request
    }
}
