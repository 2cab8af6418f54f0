import CNGHTTP2
import HTTPCore

/// HTTP/2 on one connection once its transport is ready: the nghttp2 session (frames, HPACK, flow control,
/// stream states) plus what is ours: which requests go to the handler, error answers, the stream cap, draining
/// with GOAWAY, and every deadline. Like `HTTP1ConnectionMachine` it does no I/O and reads no clock: every input
/// comes with an instant and returns actions; requests are taken with `nextRequest`, refusals with `nextRejection`,
/// and the bytes to write with `produce`.
final class HTTP2ConnectionMachine {
    private(set) var phase = Phase.awaitingPreface
    private let session: HTTP2Session
    private let timeouts: ConnectionTimeouts
    private let maxStreams: Int
    private var streamsStarted = 0
    private let startedAt: Instant
    private var prefaceBytesSeen = 0
    /// When the connection last had no open stream (for the idle deadline).
    private var idleSince: Instant?
    private var output = BlockedOutput()
    private var lingeringSince = Instant.distantFuture
    /// Why we sent our GOAWAY, which is why the connection ends once its streams are done.
    private var endReason: CloseReason?
    /// Our GOAWAY is queued and not yet written. No input is read meanwhile: nghttp2 takes new streams until its
    /// GOAWAY goes out, and they would be handled though the GOAWAY tells the client they were not, so a client
    /// could send a post again elsewhere (RFC 9113 §6.8). A protocol error in that input would also make
    /// nghttp2 queue a second GOAWAY with a higher last stream id, which §6.8 forbids.
    private var goawayQueued = false
    private var timer = TimerArming()

    /// A machine for a connection whose transport became ready at `now`.
    init(
        limits: HTTPLimits, timeouts: ConnectionTimeouts, configuration: HTTP2Configuration, maxStreams: Int,
        at now: Instant
    ) {
        session = HTTP2Session(limits: limits, configuration: configuration)
        self.timeouts = timeouts
        self.maxStreams = maxStreams
        startedAt = now
        idleSince = now
    }

    /// Whether the connection wants input now.
    var wantsInput: Bool {
        (phase == .awaitingPreface || phase == .open || phase == .draining) && session.wantsRead && !goawayQueued
    }

    /// Streams open now.
    var openStreamCount: Int { session.streams.openCount }

    /// The first actions: the preface deadline. (Our SETTINGS frame is queued already; `produce` yields it.)
    func start() -> Actions {
        updatedDeadline(Actions())
    }

    func received(_ bytes: UnsafeRawBufferPointer, at now: Instant) -> Actions {
        guard wantsInput else { return Actions() }
        if phase == .awaitingPreface { prefaceBytesSeen += bytes.count }
        do {
            try session.receive(bytes, at: now)
        } catch {
            // Only fatal errors come here (a bad preface, a flood, no memory): close at once. For protocol errors
            // nghttp2 queues a GOAWAY itself and stops reading; the connection closes once it is sent.
            phase = .closed
            return Actions(ending: .close(.protocolError))
        }
        if phase == .awaitingPreface, prefaceBytesSeen >= Self.preface.count { phase = .open }
        return updatedDeadline(takeEvents(at: now))
    }

    /// The next complete request to give the handler, and its stream; answer it with `respond`.
    func nextRequest() -> (request: HTTPRequest, stream: Int32)? {
        session.streams.nextComplete().map { ($0.request, $0.stream) }
    }

    /// The next stream to answer with an error (its request broke a limit or came too slowly): it was never
    /// handed out, so the caller reports it as a request it could not read, then calls `respond(toRejected:)`.
    func nextRejection() -> (response: HTTPResponse, stream: Int32, isHead: Bool)? {
        session.streams.nextRejected().map { ($0.response, $0.stream, $0.isHead) }
    }

    /// The record of `stream`, for the driver's bookkeeping.
    func stream(_ id: Int32) -> HTTP2Stream? { session.streams[id] }

    /// The response to the request handed out on `stream` (not sent if the client reset the stream meanwhile).
    /// A response with a body stream calls `wake` when the stream has something new (see `streamWoke`).
    func respond(
        _ response: HTTPResponse, on stream: Int32, requestID: String, date: String,
        wake: @escaping @Sendable () -> Void = {}
    ) {
        guard case .handling(let method)? = session.streams[stream]?.phase else {
            return session.respond(
                on: stream, response, requestID: requestID, date: date, includeBody: false, resetAfter: false)
        }
        session.respond(
            on: stream, response, requestID: requestID, date: date,
            includeBody: response.sendsBody(inAnswerTo: method), resetAfter: false, wake: wake)
        // Draining already: the stream ends as it begins.
        if phase != .open { session.endLiveBodies() }
    }

    /// A response's body stream has something new: streams move on (or are reset, when cut).
    func streamWoke(at now: Instant) -> Actions {
        guard phase == .open || phase == .draining else { return Actions() }
        session.liveBodiesWoke()
        return updatedDeadline(takeEvents(at: now))
    }

    /// The answer to a rejected stream, with no body for a HEAD. The client may still be sending a body: once the
    /// response is out, the stream is reset with NO_ERROR, asking it to stop (RFC 9113 §8.1).
    func respond(toRejected response: HTTPResponse, on stream: Int32, isHead: Bool, requestID: String, date: String) {
        session.respond(
            on: stream, response, requestID: requestID, date: date, includeBody: !isHead, resetAfter: true)
    }

    /// Writes frames ready to send into `output`, about `room` bytes of them at most.
    func produce(into output: inout OutputBuffer, room: Int, at now: Instant) -> Actions {
        guard phase != .closed, phase != .lingering, room > 0 else { return Actions() }
        do {
            try session.send(into: &output, limit: room)
        } catch {
            phase = .closed
            return Actions(ending: .close(.protocolError))
        }
        return updatedDeadline(takeEvents(at: now))
    }

    /// Output was written: `written` bytes since the last report, all of it, and `more` says whether `produce`
    /// gave more since.
    func outputDrained(written: Int, more: Bool, at now: Instant) -> Actions {
        output.wrote(written, drained: !more)
        guard !more else { return Actions() }
        // Everything sent has left: a response still held back waits on the client's window. (Until then the
        // client may not have had the bytes it would open the window for, and a full socket is the connection's
        // deadlines' to measure.)
        session.observeWindows(at: now)
        guard phase != .lingering, phase != .closed else { return Actions() }
        if phase == .closing || (phase == .draining && openStreamCount == 0) || !session.isActive {
            phase = .lingering
            lingeringSince = now
            return updatedDeadline(Actions(ending: .linger(endReason ?? .protocolError)))
        }
        return updatedDeadline(Actions())
    }

    /// A write could not finish: the socket is full, after `written` bytes went out since the last report.
    func writeBlocked(written: Int, at now: Instant) -> Actions {
        output.writeBlocked(written: written, at: now)
        return updatedDeadline(Actions())
    }

    func peerClosed() -> Actions {
        guard phase != .closed else { return Actions() }
        let reason = phase == .lingering ? endReason ?? .protocolError : .clientClosed
        phase = .closed
        return Actions(ending: .close(reason))
    }

    func timerFired(at now: Instant) -> Actions {
        timer.fired()
        guard phase != .closed else { return Actions() }
        // A client that takes its responses slower than the floor, or not at all: no frame would reach it.
        if output.isStalled(at: now, timeouts) {
            phase = .closed
            return Actions(ending: .close(.sendStalled))
        }
        switch phase {
        case .lingering:
            guard now < lingeringSince + timeouts.lingerSeconds else {
                phase = .closed
                return Actions(ending: .close(endReason ?? .protocolError))
            }
        case .awaitingPreface:
            guard now < startedAt + timeouts.headerSeconds else {
                phase = .closed
                return Actions(ending: .close(.idle))
            }
        case .open, .draining:
            checkStreams(at: now)
            if phase == .open, let idleSince, now >= idleSince + timeouts.keepAliveIdleSeconds {
                goAway(because: .idle)
                phase = .closing
            }
        case .closing, .closed:
            break
        }
        return updatedDeadline(Actions())
    }

    /// Whether this connection may be shed at the connection cap, and how it stands (see `ConnectionStanding`):
    /// never while a request is with the handler; measured while its output is blocked; else when idle, or when
    /// every open stream waits on the client (as the stream that moves best of them stands).
    func standing(at now: Instant) -> ConnectionStanding? {
        guard phase != .closed, !session.streams.records.values.contains(where: \.isHandling) else { return nil }
        if let blocked = output.standing(at: now, timeouts) { return blocked }
        switch phase {
        case .awaitingPreface: return .idle(since: startedAt, at: now, timeouts: timeouts)
        case .lingering: return .lingering(since: lingeringSince)
        default: break
        }
        if let idleSince { return .idle(since: idleSince, at: now, timeouts: timeouts) }
        return session.streams.standing(at: now, timeouts)
    }

    /// The server is shutting down: GOAWAY with the last stream processed; those finish, then the connection
    /// closes (RFC 9113 §6.8).
    func drain() -> Actions {
        switch phase {
        case .awaitingPreface:
            phase = .closed
            return Actions(ending: .close(.shutdown))
        case .open:
            goAway(because: .shutdown)
            session.endLiveBodies()
            phase = openStreamCount == 0 ? .closing : .draining
            return Actions()
        case .draining, .closing, .lingering, .closed:
            return Actions()
        }
    }

    /// Holds each stream to its deadlines (see `HTTP2StreamTable.enforceDeadlines`); when nothing else on the
    /// connection moves then, it follows, as an HTTP/1.1 connection does after a request or response too slow:
    /// GOAWAY, and it closes once that is written.
    private func checkStreams(at now: Instant) {
        let (stalled, follow) = session.streams.enforceDeadlines(at: now, timeouts)
        for stream in stalled { session.reset(stream, code: NGHTTP2_CANCEL.rawValue) }
        guard let reason = follow else { return }
        if phase == .open { goAway(because: reason) } else { endReason = reason }
        phase = .closing
    }

    /// Queues GOAWAY NO_ERROR with the last stream processed (see `goawayQueued`).
    private func goAway(because reason: CloseReason) {
        session.goAway(code: NGHTTP2_NO_ERROR.rawValue)
        goawayQueued = true
        endReason = reason
    }

    /// The connection closed: live bodies are let go of now, not when the session goes.
    func connectionClosed() {
        phase = .closed
        session.endLiveBodies()
    }

    /// Acts on what the session reported since the last call.
    private func takeEvents(at now: Instant) -> Actions {
        var actions = Actions()
        session.takeEvents { event in
            switch event {
            case .streamOpened:
                idleSince = nil
                streamsStarted += 1
                if streamsStarted == maxStreams, phase == .open {
                    // The cap, like HTTP/1.1's requests per connection: this one is served, then the client
                    // moves to a new connection.
                    goAway(because: .served)
                    phase = .draining
                }
            case .streamClosed:
                if openStreamCount == 0 { idleSince = now }
            case .goawaySent(let code):
                actions.work = .goawaySent(code)
                // Ours carries NO_ERROR; nghttp2's own carry an error.
                if goawayQueued, code == NGHTTP2_NO_ERROR.rawValue { goawayQueued = false }
            }
        }
        return actions
    }

    /// The earliest deadline now: the preface, a stream's (see `HTTP2Stream+Deadlines`), the idle connection, the
    /// send idle, the end of the output's rate window, or the end of lingering.
    private var deadline: Instant {
        var next = output.deadline(timeouts) ?? .distantFuture
        switch phase {
        case .awaitingPreface:
            next = min(next, startedAt + timeouts.headerSeconds)
        case .open, .draining:
            if let deadline = session.streams.deadline(timeouts) { next = min(next, deadline) }
            if phase == .open, let idleSince { next = min(next, idleSince + timeouts.keepAliveIdleSeconds) }
        case .lingering:
            next = min(next, lingeringSince + timeouts.lingerSeconds)
        case .closing, .closed:
            break
        }
        return next
    }

    /// `actions`, with the timer re-armed if the deadline moved earlier.
    private func updatedDeadline(_ actions: Actions) -> Actions {
        guard let next = timer.arm(for: deadline) else { return actions }
        var actions = actions
        actions.armTimer = next
        return actions
    }
}
