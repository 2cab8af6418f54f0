import HTTPCore

/// HTTP/2 for a connection: runs `HTTP2ConnectionMachine`, keeps each stream's request record, answers refused
/// streams, reports streams and GOAWAYs to the statistics, and after every input lets the machine write the
/// frames it has ready into the connection's output, as far as the connection's output bound allows.
final class HTTP2Driver: ProtocolDriver {
    private let machine: HTTP2ConnectionMachine
    private var recorder: RequestRecorder
    private let dates: DateCache
    private let statistics: ServerStatistics
    /// Output queued past this makes no more frames, so a slow reader holds at most this much of copied frames.
    private let maxQueuedOutputBytes: Int
    /// Open streams as last reported to the statistics.
    private var reportedStreams = 0
    /// Queues `streamWoke` on the connection (see `ResponseBodyStream.open`).
    private let wake: @Sendable () -> Void

    init(
        _ configuration: ServerConfiguration, recorder: RequestRecorder, dates: DateCache,
        statistics: ServerStatistics, at now: Instant, wake: @escaping @Sendable () -> Void = {}
    ) {
        self.wake = wake
        self.recorder = recorder
        self.dates = dates
        self.statistics = statistics
        maxQueuedOutputBytes = configuration.http2.maxQueuedOutputBytes
        machine = HTTP2ConnectionMachine(
            limits: configuration.limits, timeouts: configuration.timeouts, configuration: configuration.http2,
            maxStreams: configuration.maxRequestsPerConnection, at: now)
        statistics.http2ConnectionOpened()
    }

    deinit {
        statistics.http2StreamsChanged(by: -reportedStreams)
        statistics.http2ConnectionClosed()
    }

    var wantsInput: Bool { machine.wantsInput }
    var isLingering: Bool { machine.phase == .lingering }

    func start(at now: Instant, output: inout OutputBuffer) -> DriverStep {
        step(machine.start(), at: now, output: &output)
    }

    func received(_ bytes: UnsafeRawBufferPointer, at now: Instant, output: inout OutputBuffer) -> DriverStep {
        step(machine.received(bytes, at: now), at: now, output: &output)
    }

    func peerClosed(at now: Instant) -> DriverStep {
        convert(machine.peerClosed())
    }

    func wrote(_ outcome: WriteOutcome, at now: Instant, output: inout OutputBuffer) -> DriverStep {
        switch outcome {
        case .blocked(let written):
            return step(machine.writeBlocked(written: written, at: now), at: now, output: &output)
        case .drained(let written):
            return produce(after: written, at: now, output: &output)
        case .failed:
            return DriverStep(ending: .close(.socketError))
        }
    }

    func timerFired(at now: Instant, output: inout OutputBuffer) -> DriverStep {
        step(machine.timerFired(at: now), at: now, output: &output)
    }

    func drain(at now: Instant, output: inout OutputBuffer) -> DriverStep {
        step(machine.drain(), at: now, output: &output)
    }

    func answered(
        _ response: HTTPResponse, for ticket: RequestTicket, at now: Instant, output: inout OutputBuffer
    ) -> DriverStep {
        guard let record = machine.stream(ticket.stream)?.record else { return DriverStep() }
        recorder.finish(
            record, response, bodyBytes: bodyBytes(of: response, answering: record.request?.method ?? .GET),
            version: .http2, at: now)
        machine.respond(response, on: ticket.stream, requestID: record.id, date: dates.text, wake: wake)
        return step(at: now, output: &output)
    }

    func streamWoke(at now: Instant, output: inout OutputBuffer) -> DriverStep {
        step(machine.streamWoke(at: now), at: now, output: &output)
    }

    func closed() {
        machine.connectionClosed()
    }

    func nextRequest(at now: Instant) -> (HTTPRequest, RequestTicket)? {
        guard let (request, stream) = machine.nextRequest() else { return nil }
        let (marked, record) = recorder.begin(request, at: now)
        machine.stream(stream)?.record = record
        return (marked, RequestTicket(stream: stream))
    }

    func standing(at now: Instant) -> ConnectionStanding? { machine.standing(at: now) }

    /// `actions` carried out, then refused streams answered and frames produced.
    private func step(
        _ actions: HTTP2ConnectionMachine.Actions = .init(), at now: Instant, output: inout OutputBuffer
    ) -> DriverStep {
        var step = convert(actions)
        guard step.ending == nil else { return step }
        answerRejections(at: now)
        step.merge(produce(at: now, output: &output))
        return step
    }

    /// Answers every refused stream, each reported like an HTTP/1.1 request that could not be read.
    private func answerRejections(at now: Instant) {
        while let (response, stream, isHead) = machine.nextRejection() {
            let record = recorder.beginUnreadable(at: now)
            recorder.finish(record, response, bodyBytes: isHead ? 0 : response.body.count, version: .http2, at: now)
            machine.respond(
                toRejected: response, on: stream, isHead: isHead, requestID: record.id, date: dates.text)
        }
    }

    /// Frames written into `output` while the output bound has room, after `written` bytes left; when nothing at
    /// all is waiting any more, the machine hears that the output is drained.
    private func produce(after written: Int = 0, at now: Instant, output: inout OutputBuffer) -> DriverStep {
        var step = convert(machine.produce(into: &output, room: maxQueuedOutputBytes - output.byteCount, at: now))
        reportStreams()
        if step.ending == nil {
            step.merge(convert(machine.outputDrained(written: written, more: !output.isEmpty, at: now)))
        }
        return step
    }

    private func convert(_ actions: HTTP2ConnectionMachine.Actions) -> DriverStep {
        if case .goawaySent(let code)? = actions.work { statistics.http2GoawaySent(code: code) }
        return actions.withoutWork
    }

    /// Body bytes a response to `method` puts on the wire.
    private func bodyBytes(of response: HTTPResponse, answering method: HTTPMethod) -> Int {
        response.sendsBody(inAnswerTo: method) ? response.body.count : 0
    }

    /// Brings the open-streams gauge up to date.
    private func reportStreams() {
        let open = machine.openStreamCount
        guard open != reportedStreams else { return }
        statistics.http2StreamsChanged(by: open - reportedStreams)
        reportedStreams = open
    }
}
