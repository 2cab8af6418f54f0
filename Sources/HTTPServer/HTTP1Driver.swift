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
    /// The stream the response being sent pulls its body from, and whether its pieces go in chunks.
    private var live: (any ResponseBodyStream)?
    private var chunked = false
    /// Queues `streamWoke` on the connection (see `ResponseBodyStream.open`).
    private let wake: @Sendable () -> Void
    /// A stream is pulled while less than this is queued: a reader that falls behind is the stream's to cut.
    static let streamOutputBytes = 64 * 1024

    init(
        _ configuration: ServerConfiguration, recorder: RequestRecorder, dates: DateCache, at now: Instant,
        wake: @escaping @Sendable () -> Void
    ) {
        self.wake = wake
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
        machine.peerClosed().withoutWork
    }

    func wrote(_ outcome: WriteOutcome, at now: Instant, output: inout OutputBuffer) -> DriverStep {
        switch outcome {
        case .drained:
            var step = perform(machine.outputDrained(at: now), at: now, output: &output)
            step.merge(pull(at: now, output: &output))
            return step
        case .blocked(let written):
            return perform(machine.writeBlocked(written: written, at: now), at: now, output: &output)
        case .failed: return DriverStep(ending: .close(.socketError))
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

    func streamWoke(at now: Instant, output: inout OutputBuffer) -> DriverStep {
        pull(at: now, output: &output)
    }

    func closed() {
        live?.close()
        live = nil
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
        case .endStream: endStream(output: &output)
        }
        return actions.withoutWork
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
        guard framing.streams, let stream = response.stream else {
            if framing.includesBody { output.append(shared: response.body) }
            return
        }
        live = stream
        chunked = framing.version != .http1_0
        // Draining already: the stream ends as it begins.
        guard machine.state == .streaming else { return endStream(output: &output) }
        stream.open(wake: wake)
    }

    /// Queues what the stream has ready while the output has room; ends the response when the stream ends.
    private func pull(at now: Instant, output: inout OutputBuffer) -> DriverStep {
        guard let stream = live, machine.state == .streaming else { return DriverStep() }
        while true {
            switch stream.next(limit: max(0, Self.streamOutputBytes - output.byteCount)) {
            case .bytes(let body):
                appendPiece(body, output: &output)
            case .idle:
                return DriverStep()
            case .ended:
                endStream(output: &output)
                return machine.streamEnded(at: now).withoutWork
            case .cut:
                closed()
                return DriverStep(ending: .close(.sendStalled))
            }
        }
    }

    /// Queues one piece of a streamed body: a chunk (RFC 9112 §7.1), or the bytes themselves for HTTP/1.0.
    private func appendPiece(_ body: HTTPBody, output: inout OutputBuffer) {
        guard !body.isEmpty else { return }
        guard chunked else { return output.append(shared: body) }
        output.stage { bytes in
            bytes.append(contentsOf: String(body.count, radix: 16).utf8)
            bytes.append(contentsOf: [0x0D, 0x0A])
        }
        output.append(shared: body)
        output.append([0x0D, 0x0A])
    }

    /// Ends the streamed body: the last chunk, and the stream let go of.
    private func endStream(output: inout OutputBuffer) {
        if chunked { output.append(Array("0\r\n\r\n".utf8)) }
        closed()
    }
}
