import HTTPCore

/// HTTP/1.1 for a connection: runs `HTTP1ConnectionMachine`, keeps each request's record, and serialises the
/// machine's responses into the connection's output with their request id.
final class HTTP1Driver: ProtocolDriver {
    private var machine: HTTP1ConnectionMachine
    private var recorder: RequestRecorder
    private let dates: DateCache
    /// The request the machine handed out, until the connection takes it.
    private var handedOut: HTTPRequest?
    /// The record of the request with the handler.
    private var inFlight: RequestRecorder.Record?

    init(_ configuration: ServerConfiguration, recorder: RequestRecorder, dates: DateCache, at now: Instant) {
        self.recorder = recorder
        self.dates = dates
        machine = HTTP1ConnectionMachine(
            HTTP1ConnectionMachine.Configuration(
                limits: configuration.limits, timeouts: configuration.timeouts,
                maxRequestsPerConnection: configuration.maxRequestsPerConnection),
            at: now)
    }

    var wantsInput: Bool { machine.wantsInput }
    var isLingering: Bool { machine.state == .lingering }

    func start(at now: Instant, output: inout OutputBuffer) -> DriverStep {
        perform(machine.start(), at: now, output: &output)
    }

    func received(_ bytes: UnsafeRawBufferPointer, at now: Instant, output: inout OutputBuffer) -> DriverStep {
        perform(machine.received(bytes, at: now), at: now, output: &output)
    }

    func peerClosed(at now: Instant) -> DriverStep {
        // Never any work: nothing more is read, and a response in flight is still sent when it comes.
        let actions = machine.peerClosed()
        return DriverStep(armTimer: actions.armTimer, ending: actions.ending)
    }

    func wrote(_ outcome: WriteOutcome, at now: Instant, output: inout OutputBuffer) -> DriverStep {
        switch outcome {
        case .drained: perform(machine.outputDrained(at: now), at: now, output: &output)
        case .blocked(let written): perform(machine.writeBlocked(written: written, at: now), at: now, output: &output)
        case .failed: DriverStep(ending: .close(.socketError))
        }
    }

    func timerFired(at now: Instant, output: inout OutputBuffer) -> DriverStep {
        perform(machine.timerFired(at: now), at: now, output: &output)
    }

    func drain(at now: Instant, output: inout OutputBuffer) -> DriverStep {
        perform(machine.drain(), at: now, output: &output)
    }

    func answered(
        _ response: HTTPResponse, for ticket: RequestTicket, at now: Instant, output: inout OutputBuffer
    ) -> DriverStep {
        perform(machine.responseReady(response, at: now), at: now, output: &output)
    }

    func nextRequest(at now: Instant) -> (HTTPRequest, RequestTicket)? {
        guard let request = handedOut else { return nil }
        handedOut = nil
        let (marked, record) = recorder.begin(request, at: now)
        inFlight = record
        return (marked, RequestTicket(stream: 0))
    }

    func standing(at now: Instant) -> ConnectionStanding? { machine.standing(at: now) }

    private func perform(
        _ actions: HTTP1ConnectionMachine.Actions, at now: Instant, output: inout OutputBuffer
    ) -> DriverStep {
        switch actions.work {
        case nil: break
        case .handle(let request): handedOut = request
        case .writeContinue: output.append(HTTPResponseSerializer.continueHead)
        case .send(let response, let framing): send(response, framing, at: now, output: &output)
        }
        return DriverStep(armTimer: actions.armTimer, ending: actions.ending)
    }

    /// Reports the exchange, then writes the response with its request id.
    private func send(
        _ response: HTTPResponse, _ framing: HTTP1ConnectionMachine.Framing, at now: Instant,
        output: inout OutputBuffer
    ) {
        let record = inFlight ?? recorder.beginUnreadable(at: now)
        inFlight = nil
        recorder.finish(
            record, response, bodyBytes: framing.includesBody ? response.body.count : 0,
            version: record.request?.version ?? .http1_1, at: now)
        let dateLine = dates.line
        output.stage { bytes in
            HTTPResponseSerializer.writeHead(
                response, version: framing.version, keepAlive: framing.keepAlive, dateLine: dateLine,
                extraField: (RequestID.headerName, record.id), into: &bytes)
        }
        if framing.includesBody { output.append(shared: response.body) }
    }
}
