import CNGHTTP2
import HTTPCore

/// HTTP/2 on one connection once its transport is ready: the nghttp2 session (frames, HPACK, flow control,
/// stream states) plus what is ours: which requests go to the handler, error answers, the stream cap, draining
/// with GOAWAY, and every deadline. Like `HTTP1ConnectionMachine` it does no I/O and reads no clock: events come
/// in with an instant, actions go out, and the bytes to write are pulled with `produce`.
final class HTTP2ConnectionMachine {
    enum Action: Equatable {
        /// Give this request, received on `stream`, to the handler; answer with `responseReady`.
        case handle(HTTPRequest, stream: Int32)
        /// Answer `stream` with this error (its request broke a limit or came too slowly); it was never handed
        /// out, so the caller reports it as a request it could not read, then calls `respond`.
        case reject(HTTPResponse, stream: Int32)
        /// A GOAWAY with this error code went out (for metrics).
        case countGoaway(UInt32)
        case armTimer(Instant)
        /// Read again: input was held back while our GOAWAY waited to be written.
        case resumeReads
        /// Half-close our side and read and drop input until the client closes (see `Phase.lingering`).
        case linger
        case close
    }

    enum Phase: Equatable {
        /// Waiting for the client's connection preface.
        case awaitingPreface
        case open
        /// GOAWAY sent: streams already started finish, then the connection closes.
        case draining
        /// GOAWAY sent for good: linger once the output is written.
        case closing
        /// After a GOAWAY, everything written: input is dropped until the client closes or the linger deadline.
        /// Closing with the client's bytes unread would reset the connection, and the client could lose the
        /// GOAWAY and the responses before it (RFC 9113 §6.8; RFC 9112 §9.6 for the same with HTTP/1.1).
        case lingering
        case closed
    }

    /// The client connection preface begins with these 24 bytes (RFC 9113 §3.4), then a SETTINGS frame.
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    private(set) var phase = Phase.awaitingPreface
    private let session: HTTP2Session
    private let timeouts: ConnectionTimeouts
    private let maxStreams: Int
    /// Streams open now (from their first HEADERS until nghttp2 closes them).
    private var openStreams: Set<Int32> = []
    /// The method of each request with the handler: whether its response carries a body depends on it.
    private var handling: [Int32: HTTPMethod] = [:]
    /// Streams whose request is still arriving, with when it last made progress.
    private var arriving: [Int32: Instant] = [:]
    private var streamsStarted = 0
    private let startedAt: Instant
    private var prefaceBytesSeen = 0
    /// When the connection last had no open stream (for the idle deadline).
    private var idleSince: Instant?
    /// When a write last made progress while output was waiting; nil while nothing waits.
    private var blockedSince: Instant?
    /// The rate window of the output since the socket filled, as HTTP/1.1 measures a response (see
    /// `ConnectionTimeouts.minimumBytesPerSecond`): when it began and the bytes written in it. Nil once
    /// everything is written.
    private var rateWindow: (startedAt: Instant, bytes: Int)?
    private var lingeringSince = Instant.distantFuture
    /// Our GOAWAY is queued and not yet written. No input is read meanwhile: nghttp2 takes new streams until its
    /// GOAWAY goes out, and they would be handled though the GOAWAY tells the client they were not, so a client
    /// could send a post again elsewhere (RFC 9113 §6.8). A protocol error in that input would also make
    /// nghttp2 queue a second GOAWAY with a higher last stream id, which §6.8 forbids.
    private var goawayQueued = false
    private var armedDeadline = Instant.distantFuture

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
    var openStreamCount: Int { openStreams.count }

    /// The first actions: the preface deadline. (Our SETTINGS frame is queued already; `produce` yields it.)
    func start() -> [Action] {
        updatedDeadline()
    }

    func received(_ bytes: UnsafeRawBufferPointer, at now: Instant) -> [Action] {
        guard wantsInput else { return [] }
        if phase == .awaitingPreface { prefaceBytesSeen += bytes.count }
        do {
            try session.receive(bytes)
        } catch {
            // Only fatal errors come here (a bad preface, a flood, no memory): close at once. For protocol errors
            // nghttp2 queues a GOAWAY itself and stops reading; the connection closes once it is sent.
            phase = .closed
            return [.close]
        }
        if phase == .awaitingPreface, prefaceBytesSeen >= Self.preface.count { phase = .open }
        return actions(for: session.takeEvents(), at: now) + updatedDeadline()
    }

    /// The response to the request handed out on `stream` (ignored if the client reset the stream meanwhile).
    func responseReady(_ response: HTTPResponse, on stream: Int32, date: String) {
        guard let method = handling.removeValue(forKey: stream) else { return }
        session.respond(
            on: stream, status: response.status.code, fields: HTTP2ResponseFields.fields(for: response, date: date),
            body: response.body, includeBody: response.sendsBody(inAnswerTo: method), resetAfter: false)
    }

    /// The answer to a `.reject`ed stream, with no body for a HEAD. The client may still be sending a body: once
    /// the response is out, the stream is reset with NO_ERROR, asking it to stop (RFC 9113 §8.1).
    func respond(toRejected response: HTTPResponse, on stream: Int32, date: String) {
        session.respond(
            on: stream, status: response.status.code, fields: HTTP2ResponseFields.fields(for: response, date: date),
            body: response.body, includeBody: !rejectsHead(stream), resetAfter: true)
    }

    /// Whether the `.reject`ed request on `stream` is a HEAD (its answer goes without a body).
    func rejectsHead(_ stream: Int32) -> Bool { session.isHeadRequest(on: stream) }

    /// Frames ready to write, at most about `room` bytes of them; empty when there is nothing (more) to send.
    func produce(room: Int, at now: Instant) -> (chunks: [ArraySlice<UInt8>], actions: [Action]) {
        guard phase != .closed, phase != .lingering, room > 0 else { return ([], []) }
        let chunks: [ArraySlice<UInt8>]
        do {
            chunks = try session.send(limit: room)
        } catch {
            phase = .closed
            return ([], [.close])
        }
        return (chunks, actions(for: session.takeEvents(), at: now))
    }

    /// `bytes` more were written and the output queue is empty for now (`produce` may have more to give).
    func wrote(_ bytes: Int) {
        rateWindow?.bytes += bytes
    }

    /// Everything produced so far is written; `more` is what `produce` had left to give.
    func outputDrained(more: Bool, at now: Instant) -> [Action] {
        blockedSince = nil
        rateWindow = nil
        guard !more, phase != .lingering else { return [] }
        if phase == .closing || (phase == .draining && openStreams.isEmpty) || !session.isActive {
            phase = .lingering
            lingeringSince = now
            return [.linger] + updatedDeadline()
        }
        return updatedDeadline()
    }

    /// A write could not finish: the socket is full, after `written` bytes went out since the last report.
    func writeBlocked(written: Int, at now: Instant) -> [Action] {
        if written > 0 || blockedSince == nil { blockedSince = now }
        // What the kernel took before the socket first filled does not count, as with HTTP/1.1.
        if rateWindow == nil { rateWindow = (now, 0) } else { rateWindow?.bytes += written }
        return updatedDeadline()
    }

    func peerClosed() -> [Action] {
        guard phase != .closed else { return [] }
        phase = .closed
        return [.close]
    }

    func timerFired(at now: Instant) -> [Action] {
        armedDeadline = .distantFuture
        guard phase != .closed else { return [] }
        if let window = rateWindow, let floor = timeouts.minimumBytesPerWindow,
            now >= window.startedAt + timeouts.rateWindowSeconds
        {
            // A client that takes its responses slower than the floor: no frame would reach it, so just close.
            guard Double(window.bytes) >= floor else {
                phase = .closed
                return [.close]
            }
            rateWindow = (now, 0)
        }
        if let blockedSince, now >= blockedSince + timeouts.sendIdleSeconds {
            phase = .closed
            return [.close]
        }
        if phase == .lingering {
            guard now < lingeringSince + timeouts.lingerSeconds else {
                phase = .closed
                return [.close]
            }
            return updatedDeadline()
        }
        if phase == .awaitingPreface {
            guard now < startedAt + timeouts.headerSeconds else {
                phase = .closed
                return [.close]
            }
            return updatedDeadline()
        }
        var actions: [Action] = []
        for (stream, since) in arriving where now >= since + timeouts.bodyIdleSeconds {
            arriving[stream] = nil
            actions.append(.reject(.error(.requestTimeout, "request timed out"), stream: stream))
        }
        if phase == .open, let idleSince, now >= idleSince + timeouts.keepAliveIdleSeconds {
            goAway()
            phase = .closing
        }
        return actions + updatedDeadline()
    }

    /// Whether this connection may be shed at the connection cap, and how it stands (see `ConnectionStanding`):
    /// never while a request is with the handler; measured while its output is blocked; else only when idle.
    func standing(at now: Instant) -> ConnectionStanding? {
        guard phase != .closed, handling.isEmpty else { return nil }
        if let window = rateWindow {
            return .measured(bytes: window.bytes, since: window.startedAt, at: now, timeouts: timeouts)
        }
        switch phase {
        case .awaitingPreface: return .idle(since: startedAt, at: now, timeouts: timeouts)
        case .lingering: return .lingering(since: lingeringSince)
        default: return idleSince.flatMap { .idle(since: $0, at: now, timeouts: timeouts) }
        }
    }

    /// The server is shutting down: GOAWAY with the last stream processed; those finish, then the connection
    /// closes (RFC 9113 §6.8).
    func drain() -> [Action] {
        switch phase {
        case .awaitingPreface:
            phase = .closed
            return [.close]
        case .open:
            goAway()
            phase = openStreams.isEmpty ? .closing : .draining
            return []
        case .draining, .closing, .lingering, .closed:
            return []
        }
    }

    /// Queues GOAWAY NO_ERROR with the last stream processed (see `goawayQueued`).
    private func goAway() {
        session.goAway(code: NGHTTP2_NO_ERROR.rawValue)
        goawayQueued = true
    }

    // MARK: - Session events

    private func actions(for events: [HTTP2Session.Event], at now: Instant) -> [Action] {
        var actions: [Action] = []
        for event in events {
            switch event {
            case .streamOpened(let stream):
                openStreams.insert(stream)
                arriving[stream] = now
                idleSince = nil
                streamsStarted += 1
                if streamsStarted == maxStreams, phase == .open {
                    // The cap, like HTTP/1.1's requests per connection: this one is served, then the client
                    // moves to a new connection.
                    goAway()
                    phase = .draining
                }
            case .bodyProgress(let stream):
                if arriving[stream] != nil { arriving[stream] = now }
            case .request(let stream, let request):
                arriving[stream] = nil
                handling[stream] = request.method
                actions.append(.handle(request, stream: stream))
            case .rejected(let stream, let error):
                arriving[stream] = nil
                actions.append(.reject(error.response, stream: stream))
            case .streamClosed(let stream):
                openStreams.remove(stream)
                arriving[stream] = nil
                handling[stream] = nil
                if openStreams.isEmpty { idleSince = now }
            case .goawaySent(let code):
                actions.append(.countGoaway(code))
                if goawayQueued, code == NGHTTP2_NO_ERROR.rawValue {  // ours: nghttp2's own carry an error
                    goawayQueued = false
                    if wantsInput { actions.append(.resumeReads) }
                }
            }
        }
        return actions
    }

    /// The earliest deadline now: the preface, a stalled request body, the idle connection, the send idle, the end
    /// of the output's rate window, or the end of lingering.
    private var deadline: Instant {
        var next = Instant.distantFuture
        if let blockedSince { next = min(next, blockedSince + timeouts.sendIdleSeconds) }
        if let window = rateWindow, timeouts.minimumBytesPerWindow != nil {
            next = min(next, window.startedAt + timeouts.rateWindowSeconds)
        }
        switch phase {
        case .awaitingPreface:
            next = min(next, startedAt + timeouts.headerSeconds)
        case .open, .draining:
            if let oldest = arriving.values.min() { next = min(next, oldest + timeouts.bodyIdleSeconds) }
            if phase == .open, let idleSince { next = min(next, idleSince + timeouts.keepAliveIdleSeconds) }
        case .lingering:
            next = min(next, lingeringSince + timeouts.lingerSeconds)
        case .closing, .closed:
            break
        }
        return next
    }

    private func updatedDeadline() -> [Action] {
        let next = deadline
        guard next < armedDeadline else { return [] }
        armedDeadline = next
        return [.armTimer(next)]
    }
}
