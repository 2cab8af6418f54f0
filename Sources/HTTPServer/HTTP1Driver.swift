import Dispatch
import HTTPCore

/// Carries out what `HTTP1ConnectionMachine` decides: requests to the handler, responses serialized with their
/// request id, writes, reads and the timer through `ConnectionIO`.
final class HTTP1Driver: ProtocolDriver, @unchecked Sendable {  // touched only on `queue`
    typealias Action = HTTP1ConnectionMachine.Action

    private var machine: HTTP1ConnectionMachine
    // Strong: a handler thread may still hold the driver after the connection closed; the connection then ignores
    // what it is asked. The connection drops its driver when its sources are gone, which ends the cycle.
    private let io: any ConnectionIO
    private let environment: ConnectionEnvironment
    private let queue: DispatchQueue
    private let connectionID: Int
    /// Who each request is from.
    private let identity: ClientIdentity
    /// The request with the handler, since when, and from whom.
    private var inFlight: (request: HTTPRequest, startedAt: Instant, client: ClientAddress)?
    /// The id the response being made echoes in `X-Request-Id`.
    private var requestID = ""
    /// Actions waiting to be carried out; see `run`.
    private var pending: [Action] = []
    private var running = false
    private var resumedReads = false

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
        machine = HTTP1ConnectionMachine(
            HTTP1ConnectionMachine.Configuration(
                limits: configuration.limits, timeouts: configuration.timeouts,
                maxRequestsPerConnection: configuration.maxRequestsPerConnection),
            at: now)
    }

    var wantsInput: Bool { machine.wantsInput }
    var isLingering: Bool { machine.state == .lingering }

    func start() { run(machine.start()) }
    func received(_ bytes: UnsafeRawBufferPointer, at now: Instant) { run(machine.received(bytes, at: now)) }
    func peerClosed(at now: Instant) { run(machine.peerClosed()) }
    func outputDrained(written: Int, at now: Instant) { run(machine.outputDrained(at: now)) }
    func writeBlocked(written: Int, at now: Instant) { run(machine.writeBlocked(written: written, at: now)) }
    func timerFired(at now: Instant) { run(machine.timerFired(at: now)) }
    func drain(at now: Instant) { run(machine.drain()) }
    func standing(at now: Instant) -> ConnectionStanding? { machine.standing(at: now) }

    /// Carries out `actions` in order. Actions may cause events (an answer ready at once, output that drains at
    /// once) whose actions queue behind these, so events reach the machine one at a time and the stack does not
    /// grow with the number of pipelined requests.
    private func run(_ actions: [Action]) {
        pending += actions
        guard !running else { return }
        running = true
        var index = 0
        while index < pending.count {
            perform(pending[index])
            index += 1
        }
        pending.removeAll(keepingCapacity: true)
        running = false
        if resumedReads {
            resumedReads = false
            io.readBufferedInput()
        }
    }

    private func perform(_ action: Action) {
        switch action {
        case .handle(let request): handle(request)
        case .write(let bytes):
            io.write(bytes[...])
            io.flush()
        case .send(let response, let framing): send(response, framing)
        case .suspendReads: io.suspendReads()
        case .resumeReads:
            io.resumeReads()
            resumedReads = true
        case .armTimer(let deadline): io.arm(deadline)
        case .linger: io.linger()
        case .close:
            pending.removeAll()
            io.close()
        }
    }

    /// Hands `request` to the handler under its request id; the response comes back to this queue.
    private func handle(_ request: HTTPRequest) {
        let (request, client) = identity.marked(identified(request))
        inFlight = (request, .now, client)
        environment.answer(request, on: queue) { response in
            self.run(self.machine.responseReady(response, at: .now))
        }
    }

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
        environment.requestID(connection: connectionID, sequence: machine.requestsServed + 1)
    }

    /// Reports the exchange to the observer, echoes the request id and writes the response.
    private func send(_ response: HTTPResponse, _ framing: HTTP1ConnectionMachine.Framing) {
        let answered = inFlight
        inFlight = nil
        if answered == nil { requestID = newRequestID() }
        let now = Instant.now
        environment.handler.observe(HTTPExchange(
            request: answered?.request, response: response, bodyBytes: framing.includesBody ? response.body.count : 0,
            seconds: answered.map { now.seconds(since: $0.startedAt) } ?? 0,
            remoteAddress: (answered?.client ?? identity.connection).text,
            requestID: requestID, version: answered?.request.version ?? .http1_1))
        var response = response
        response.headers.add(RequestID.headerName, requestID)
        let head = HTTPResponseSerializer.head(
            response, version: framing.version, keepAlive: framing.keepAlive, date: environment.dates.now)
        io.write(head[...])
        if framing.includesBody { io.write(response.body[...]) }
        io.flush()
    }
}
