import HTTPCore

/// HTTP/1.1 on one connection once its transport is ready, as a pure state machine: events in (bytes received,
/// a response ready, output written or blocked, the peer closed, the timer fired, the server draining), each at
/// an instant the caller gives, and actions out for `Connection` to carry out. It owns the request decoder,
/// keep-alive, the request cap and every deadline; it does no I/O and reads no clock.
///
/// Requests are answered strictly in order: while one is with the handler or its response is being written,
/// reads are suspended and pipelined bytes wait in the decoder.
struct HTTP1ConnectionMachine {
    private(set) var state = State.reading
    /// Responses sent on this connection so far.
    private(set) var requestsServed = 0
    private let configuration: Configuration
    private var decoder: HTTPRequestDecoder
    /// The request with the handler: what its response's framing depends on.
    private var inFlight: (version: HTTPVersion, method: HTTPMethod, keepAlive: Bool)?
    /// Set once the connection is to close (after lingering) when the output is written, with why.
    private var closeReason: CloseReason?
    /// The server is shutting down: answer what is in flight, then close.
    private var draining = false
    private var requestStartedAt: Instant?
    private var lastProgressAt: Instant
    private var timer = TimerArming()
    /// The rate window of the body or head being read, or of the response since the socket filled.
    private var rateWindow: RateWindow?
    /// While streaming: the last write found the socket full, and nothing has drained it since.
    private var streamBlocked = false

    /// A machine for a connection whose transport became ready at `now`.
    init(_ configuration: Configuration, at now: Instant) {
        self.configuration = configuration
        decoder = HTTPRequestDecoder(limits: configuration.limits)
        lastProgressAt = now
    }

    /// Whether the connection wants request bytes now (the caller reads only then).
    var wantsInput: Bool { state == .reading }

    private var timeouts: ConnectionTimeouts { configuration.timeouts }

    /// The first actions: arm the deadline for the first request's first byte.
    mutating func start() -> Actions {
        updatedDeadline(Actions())
    }

    mutating func received(_ bytes: UnsafeRawBufferPointer, at now: Instant) -> Actions {
        guard state == .reading else { return Actions() }  // lingering input is drained by the caller and dropped
        let wasMidRequest = decoder.isMidRequest
        let wasReadingBody = decoder.isReadingBody
        decoder.append(bytes)
        lastProgressAt = now
        if requestStartedAt == nil, decoder.isMidRequest { requestStartedAt = now }
        rateWindow?.add(bytes.count)
        let actions = processInput(at: now)
        guard state == .reading else { return actions }
        // A head is measured from its first byte, a body from the end of its head.
        if decoder.isReadingBody && !wasReadingBody || decoder.isMidRequest && !wasMidRequest {
            rateWindow = RateWindow(startingAt: now)
            return updatedDeadline(actions)
        }
        return actions
    }

    /// The handler's response to the request in flight: ready from its plan, or from deferred work that hands it
    /// to the connection's queue once made.
    mutating func responseReady(_ response: HTTPResponse, at now: Instant) -> Actions {
        guard state == .processing, let request = inFlight else { return Actions() }
        inFlight = nil
        rateWindow = nil
        requestsServed += 1
        if closeReason == nil {
            if draining {
                closeReason = .shutdown
            } else if !request.keepAlive || requestsServed >= configuration.maxRequestsPerConnection {
                closeReason = .served
            }
        }
        state = .writing
        lastProgressAt = now
        var framing = Framing(
            version: request.version, keepAlive: closeReason == nil,
            includesBody: response.sendsBody(inAnswerTo: request.method))
        if response.stream != nil, framing.includesBody {
            // A stream lasts until the server ends it; nothing can follow it on this connection.
            framing.streams = true
            framing.keepAlive = false
            if closeReason == nil { closeReason = .served }
            if !draining { state = .streaming }
        }
        return Actions(work: .send(response, framing))
    }

    /// The streamed body ended (its stream said so) and its last chunk is queued: the connection lingers once
    /// it is written.
    mutating func streamEnded(at now: Instant) -> Actions {
        guard state == .streaming else { return Actions() }
        state = .writing
        streamBlocked = false
        lastProgressAt = now
        return updatedDeadline(Actions())
    }

    /// A write could not finish: the socket is full, after `written` bytes went out since the last report.
    mutating func writeBlocked(written: Int, at now: Instant) -> Actions {
        // A stream's send idle deadline counts from when its socket filled.
        if written > 0 || (state == .streaming && !streamBlocked) { lastProgressAt = now }
        if state == .streaming { streamBlocked = true }
        // Until the socket first fills, the kernel takes what it can: the rate counts from then on.
        if rateWindow == nil { rateWindow = RateWindow(startingAt: now) } else { rateWindow?.add(written) }
        return updatedDeadline(Actions())
    }

    /// Everything queued has been written.
    mutating func outputDrained(at now: Instant) -> Actions {
        if state == .streaming {
            // Until the socket fills again, a stream has no deadline.
            streamBlocked = false
            rateWindow = nil
            lastProgressAt = now
            return Actions()
        }
        guard state == .writing else { return Actions() }  // an interim response, written while reading
        lastProgressAt = now
        rateWindow = nil
        if let closeReason {
            state = .lingering
            return updatedDeadline(Actions(ending: .linger(closeReason)))
        }
        state = .reading
        requestStartedAt = decoder.isMidRequest ? now : nil
        let actions = processInput(at: now)
        if state == .reading, decoder.isMidRequest { rateWindow = RateWindow(startingAt: now) }  // a pipelined head
        return actions
    }

    /// The peer closed its side (or, while lingering, input ended or failed).
    mutating func peerClosed() -> Actions {
        switch state {
        case .reading:
            state = .closed
            return Actions(ending: .close(.clientClosed))
        case .lingering:
            state = .closed
            return Actions(ending: .close(closeReason ?? .clientClosed))
        case .processing, .writing, .streaming:
            // A half-closed client still gets the answer to a request it completed; nothing more.
            if closeReason == nil { closeReason = .clientClosed }
            return Actions()
        case .closed:
            return Actions()
        }
    }

    mutating func timerFired(at now: Instant) -> Actions {
        timer.fired()
        let timeouts = timeouts
        let measured = state == .reading || state == .writing || state == .streaming
        if measured, rateWindow?.check(at: now, timeouts) == .missed {
            return tooSlow(at: now)
        }
        guard deadline <= now else { return updatedDeadline(Actions()) }
        switch state {
        case .reading where decoder.isMidRequest:
            return reject(.error(.requestTimeout, "request timed out"), at: now)
        case .processing, .closed:
            return Actions()
        case .reading:
            state = .closed
            return Actions(ending: .close(.idle))
        case .writing, .streaming:
            state = .closed
            return Actions(ending: .close(.sendStalled))
        case .lingering:
            state = .closed
            return Actions(ending: .close(closeReason ?? .served))
        }
    }

    /// Whether this connection may be shed at the connection cap, and how it stands (see `ConnectionStanding`).
    func standing(at now: Instant) -> ConnectionStanding? {
        switch state {
        case .processing, .closed:
            return nil
        case .lingering:
            return .lingering(since: lastProgressAt)
        case .streaming:
            // A stream that flows is never shed; one blocked on a full socket is measured like any response.
            return streamBlocked ? rateWindow?.standing(at: now, timeouts) : nil
        case .reading, .writing:
            // A request arriving piecewise, or a response blocked on a full socket.
            if let rateWindow { return rateWindow.standing(at: now, timeouts) }
            guard state == .reading, !decoder.isMidRequest else { return nil }
            return .idle(since: lastProgressAt, at: now, timeouts: timeouts)
        }
    }

    /// The server is shutting down: an idle connection closes now, a busy one after its current response.
    mutating func drain() -> Actions {
        draining = true
        if state == .streaming {
            closeReason = .shutdown
            state = .writing
            streamBlocked = false
            return updatedDeadline(Actions(work: .endStream))
        }
        guard state == .reading, !decoder.isMidRequest else { return Actions() }
        state = .closed
        return Actions(ending: .close(.shutdown))
    }

    /// Acts on the next complete event the decoder has, if any: a request is handed out, `100 Continue` written.
    private mutating func processInput(at now: Instant) -> Actions {
        let event: HTTPDecoderEvent?
        do {
            event = try decoder.next()
        } catch {
            return reject(error.response, at: now)
        }
        switch event {
        case nil:
            return updatedDeadline(Actions())
        case .expectContinue:
            // The body is not all here (else no `100 Continue` is due), so nothing more can follow yet.
            return updatedDeadline(Actions(work: .writeContinue))
        case .request(let request):
            state = .processing
            inFlight = (request.version, request.method, request.keepAlive)
            return Actions(work: .handle(request))
        }
    }

    /// A request or response that moves slower than the floor: a request gets 408, a response is cut off.
    private mutating func tooSlow(at now: Instant) -> Actions {
        rateWindow = nil
        if state == .reading { return reject(.error(.requestTimeout, "request too slow"), at: now) }
        state = .closed
        return Actions(ending: .close(.sendStalled))
    }

    /// Answers with a final error after which the connection closes; nothing more is parsed.
    private mutating func reject(_ response: HTTPResponse, at now: Instant) -> Actions {
        closeReason = .requestError
        state = .writing
        lastProgressAt = now
        return Actions(work: .send(response, Framing(version: .http1_1, keepAlive: false, includesBody: true)))
    }

    /// When the current state times out (see `ConnectionTimeouts`).
    private var deadline: Instant {
        min(idleDeadline, rateDeadline)
    }

    /// When the current rate window ends, if one is being measured.
    private var rateDeadline: Instant {
        guard state == .reading || state == .writing || state == .streaming else { return .distantFuture }
        return rateWindow?.end(timeouts) ?? .distantFuture
    }

    /// When the current state times out for want of any progress.
    private var idleDeadline: Instant {
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
        case .streaming:
            return streamBlocked ? lastProgressAt + timeouts.sendIdleSeconds : .distantFuture
        case .lingering:
            return lastProgressAt + timeouts.lingerSeconds
        }
    }

    /// `actions`, with the timer re-armed if the deadline moved earlier.
    private mutating func updatedDeadline(_ actions: Actions) -> Actions {
        guard let next = timer.arm(for: deadline) else { return actions }
        var actions = actions
        actions.armTimer = next
        return actions
    }
}
