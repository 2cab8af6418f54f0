import HTTPCore

/// HTTP/1.1 on one connection once its transport is ready, as a pure state machine: events in (bytes received,
/// a response ready, output written or blocked, the peer closed, the timer fired, the server draining), each at
/// an instant the caller gives, and actions out for `Connection` to carry out. It owns the request decoder,
/// keep-alive, the request cap and every deadline; it does no I/O and reads no clock.
///
/// Requests are answered strictly in order: while one is with the handler or its response is being written,
/// reads are suspended and pipelined bytes wait in the decoder.
struct HTTP1ConnectionMachine {
    enum State: Equatable {
        /// Waiting for (more of) a request.
        case reading
        /// A request is with the handler.
        case processing
        /// A response is being written.
        case writing
        /// The final response is written and our side half-closed; input is drained until the peer closes
        /// (RFC 9112 §9.6), so unread request bytes do not turn that response into a reset.
        case lingering
        case closed
    }

    /// How the response to the request in flight goes on the wire.
    struct Framing: Equatable {
        var version: HTTPVersion
        var keepAlive: Bool
        /// False for HEAD and for statuses without content (304): the body only sets Content-Length.
        var includesBody: Bool
    }

    enum Action: Equatable {
        /// Give this request to the handler; its response comes back through `responseReady`.
        case handle(HTTPRequest)
        /// Write these bytes (the interim `100 Continue`).
        case write([UInt8])
        /// Send this response, framed so. It answers the request last handed out when one is in flight, and
        /// is otherwise a final error (unparsable input, or a request too slow to arrive).
        case send(HTTPResponse, Framing)
        case suspendReads
        case resumeReads
        /// Fire the timer at this instant (earlier than whatever it was armed for).
        case armTimer(Instant)
        /// Half-close our side and drain input (see `State.lingering`).
        case linger
        case close
    }

    struct Configuration: Sendable {
        var limits = HTTPLimits()
        var timeouts = ConnectionTimeouts()
        var maxRequestsPerConnection = 1000
    }

    private(set) var state = State.reading
    /// Responses sent on this connection so far.
    private(set) var requestsServed = 0
    private let configuration: Configuration
    private var decoder: HTTPRequestDecoder
    /// The request with the handler: what its response's framing depends on.
    private var inFlight: (version: HTTPVersion, method: HTTPMethod, keepAlive: Bool)?
    /// Close (after lingering) once the output is written.
    private var closeWhenWritten = false
    /// The server is shutting down: answer what is in flight, then close.
    private var draining = false
    private var requestStartedAt: Instant?
    private var lastProgressAt: Instant
    /// What the timer is armed for; later deadlines are found when it fires.
    private var armedDeadline = Instant.distantFuture
    /// The rate window of the body being read, or of the response since the socket filled (see
    /// `ConnectionTimeouts.minimumBytesPerSecond`): when it began and the bytes it has carried.
    private var rateWindow: (startedAt: Instant, bytes: Int)?

    /// A machine for a connection whose transport became ready at `now`.
    init(_ configuration: Configuration, at now: Instant) {
        self.configuration = configuration
        decoder = HTTPRequestDecoder(limits: configuration.limits)
        lastProgressAt = now
    }

    /// Whether the connection wants request bytes now (the caller reads only then).
    var wantsInput: Bool { state == .reading }

    /// The first actions: arm the deadline for the first request's first byte.
    mutating func start() -> [Action] {
        updatedDeadline()
    }

    mutating func received(_ bytes: UnsafeRawBufferPointer, at now: Instant) -> [Action] {
        guard state == .reading else { return [] }  // lingering input is drained by the caller and dropped
        let wasMidRequest = decoder.isMidRequest
        let wasReadingBody = decoder.isReadingBody
        decoder.append(bytes)
        lastProgressAt = now
        if requestStartedAt == nil, decoder.isMidRequest { requestStartedAt = now }
        rateWindow?.bytes += bytes.count
        let actions = processInput(at: now)
        guard state == .reading else { return actions }
        // A head is measured from its first byte, a body from the end of its head.
        if decoder.isReadingBody && !wasReadingBody || decoder.isMidRequest && !wasMidRequest {
            rateWindow = (now, 0)
            return actions + updatedDeadline()
        }
        return actions
    }

    /// The handler's response to the request in flight (or the server's 503 when no handler thread took it).
    mutating func responseReady(_ response: HTTPResponse, at now: Instant) -> [Action] {
        guard state == .processing, let request = inFlight else { return [] }
        inFlight = nil
        rateWindow = nil
        requestsServed += 1
        let keepAlive = request.keepAlive && !draining && !closeWhenWritten
            && requestsServed < configuration.maxRequestsPerConnection
        closeWhenWritten = !keepAlive
        state = .writing
        lastProgressAt = now
        let framing = Framing(
            version: request.version, keepAlive: keepAlive, includesBody: response.sendsBody(inAnswerTo: request.method))
        return [.send(response, framing)]
    }

    /// A write could not finish: the socket is full, after `written` bytes went out since the last report.
    mutating func writeBlocked(written: Int, at now: Instant) -> [Action] {
        if written > 0 { lastProgressAt = now }
        // Until the socket first fills, the kernel takes what it can: the rate counts from then on.
        if rateWindow == nil { rateWindow = (now, 0) } else { rateWindow?.bytes += written }
        return updatedDeadline()
    }

    /// Everything queued has been written.
    mutating func outputDrained(at now: Instant) -> [Action] {
        guard state == .writing else { return [] }  // an interim response, written while reading
        lastProgressAt = now
        rateWindow = nil
        if closeWhenWritten {
            state = .lingering
            return [.linger, .resumeReads] + updatedDeadline()
        }
        state = .reading
        requestStartedAt = decoder.isMidRequest ? now : nil
        let actions = processInput(at: now)
        if state == .reading, decoder.isMidRequest { rateWindow = (now, 0) }  // a pipelined head under way
        return state == .reading ? [.resumeReads] + actions : actions
    }

    /// The peer closed its side (or, while lingering, input ended or failed).
    mutating func peerClosed() -> [Action] {
        switch state {
        case .reading, .lingering:
            state = .closed
            return [.close]
        case .processing, .writing:
            // A half-closed client still gets the answer to a request it completed; nothing more.
            closeWhenWritten = true
            return []
        case .closed:
            return []
        }
    }

    mutating func timerFired(at now: Instant) -> [Action] {
        armedDeadline = .distantFuture
        if let window = rateWindow, let floor = configuration.timeouts.minimumBytesPerWindow,
            now >= window.startedAt + configuration.timeouts.rateWindowSeconds, state == .reading || state == .writing
        {
            guard Double(window.bytes) >= floor else { return tooSlow(at: now) }
            rateWindow = (now, 0)
        }
        guard deadline <= now else { return updatedDeadline() }
        switch state {
        case .reading where decoder.isMidRequest:
            return reject(.error(.requestTimeout, "request timed out"), at: now)
        case .processing, .closed:
            return []
        case .reading, .writing, .lingering:
            state = .closed
            return [.close]
        }
    }

    /// Whether this connection may be shed at the connection cap, and how it stands (see `ConnectionStanding`).
    func standing(at now: Instant) -> ConnectionStanding? {
        let timeouts = configuration.timeouts
        switch state {
        case .processing, .closed:
            return nil
        case .lingering:
            return .lingering(since: lastProgressAt)
        case .reading, .writing:
            // A request arriving piecewise, or a response blocked on a full socket.
            if let window = rateWindow {
                return .measured(bytes: window.bytes, since: window.startedAt, at: now, timeouts: timeouts)
            }
            guard state == .reading, !decoder.isMidRequest else { return nil }
            return .idle(since: lastProgressAt, at: now, timeouts: timeouts)
        }
    }

    /// The server is shutting down: an idle connection closes now, a busy one after its current response.
    mutating func drain() -> [Action] {
        draining = true
        guard state == .reading, !decoder.isMidRequest else { return [] }
        state = .closed
        return [.close]
    }

    /// Acts on every complete event the decoder has; stops once a request is handed out.
    private mutating func processInput(at now: Instant) -> [Action] {
        var actions: [Action] = []
        while state == .reading {
            let event: HTTPDecoderEvent?
            do {
                event = try decoder.next()
            } catch {
                return actions + reject(error.response, at: now)
            }
            switch event {
            case nil:
                return actions + updatedDeadline()
            case .expectContinue:
                actions.append(.write(HTTPResponseSerializer.continueHead))
            case .request(let request):
                state = .processing
                inFlight = (request.version, request.method, request.keepAlive)
                actions += [.suspendReads, .handle(request)]
            }
        }
        return actions
    }

    /// A request or response that moves slower than the floor: a request gets 408, a response is cut off.
    private mutating func tooSlow(at now: Instant) -> [Action] {
        rateWindow = nil
        if state == .reading { return reject(.error(.requestTimeout, "request too slow"), at: now) }
        state = .closed
        return [.close]
    }

    /// Answers with a final error after which the connection closes; nothing more is parsed.
    private mutating func reject(_ response: HTTPResponse, at now: Instant) -> [Action] {
        closeWhenWritten = true
        state = .writing
        lastProgressAt = now
        return [.suspendReads, .send(response, Framing(version: .http1_1, keepAlive: false, includesBody: true))]
    }

    /// When the current state times out (see `ConnectionTimeouts`).
    private var deadline: Instant {
        min(idleDeadline, rateDeadline)
    }

    /// When the current rate window ends, if one is being measured.
    private var rateDeadline: Instant {
        guard let window = rateWindow, configuration.timeouts.minimumBytesPerWindow != nil,
            state == .reading || state == .writing
        else { return .distantFuture }
        return window.startedAt + configuration.timeouts.rateWindowSeconds
    }

    /// When the current state times out for want of any progress.
    private var idleDeadline: Instant {
        let timeouts = configuration.timeouts
        switch state {
        case .reading:
            if decoder.isReadingBody { return lastProgressAt + timeouts.bodyIdleSeconds }
            if let requestStartedAt { return requestStartedAt + timeouts.headerSeconds }
            // A new connection gets the header deadline for its first byte, not the keep-alive allowance.
            if requestsServed == 0 { return lastProgressAt + timeouts.headerSeconds }
            return lastProgressAt + timeouts.keepAliveIdleSeconds
        case .processing, .closed:
            return .distantFuture
        case .writing:
            return lastProgressAt + timeouts.sendIdleSeconds
        case .lingering:
            return lastProgressAt + timeouts.lingerSeconds
        }
    }

    /// Re-arms the timer if the deadline moved earlier.
    private mutating func updatedDeadline() -> [Action] {
        let next = deadline
        guard next < armedDeadline else { return [] }
        armedDeadline = next
        return [.armTimer(next)]
    }
}
