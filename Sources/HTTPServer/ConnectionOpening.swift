import HTTPCore

/// How a connection gets from accept to a protocol: a trusted proxy's PROXY header, the TLS handshake, and on
/// plain HTTP with HTTP/2 on, the first bytes, which tell the HTTP/2 preface (RFC 9113 §3.3, prior knowledge) from
/// an HTTP/1.1 request. Like the protocol machines it does no I/O and reads no clock: `Connection` does what the
/// current phase needs when the socket is ready, and reports what came of it with an instant.
struct ConnectionOpening {
    enum Phase: Equatable {
        /// A trusted proxy's connection: its PROXY header, or the lack of one, comes first.
        case proxyHeader
        case handshake
        /// Plain HTTP with HTTP/2 on: reading the first bytes.
        case sniffing
        /// The protocol is chosen; the machine has nothing more to say.
        case open(http2: Bool)
        case closed(CloseReason)
    }

    /// What the connection does after reporting to the machine.
    struct Step: Equatable {
        /// Fire the timer at this instant.
        var armTimer: Instant?
        /// Whether the phase changed, so its I/O should be tried at once (the socket may be ready for it already).
        var advanced = false
    }

    private(set) var phase: Phase
    private let openedAt: Instant
    private let sniffsPlainHTTP: Bool
    private let headerSeconds: Double
    private var deadline: Instant
    /// The bytes read while sniffing; they begin the stream the chosen protocol reads.
    private(set) var sniffed: [UInt8] = []

    /// A connection accepted at `now`; `proxied` when its peer is a trusted proxy, `sniffsPlainHTTP` on plain HTTP
    /// with HTTP/2 on.
    init(at now: Instant, proxied: Bool, sniffsPlainHTTP: Bool, timeouts: ConnectionTimeouts) {
        openedAt = now
        phase = proxied ? .proxyHeader : .handshake
        self.sniffsPlainHTTP = sniffsPlainHTTP
        headerSeconds = timeouts.headerSeconds
        deadline = now + timeouts.handshakeSeconds
    }

    /// The first step: the handshake deadline, which the PROXY header counts against too.
    func start() -> Step {
        Step(armTimer: deadline)
    }

    /// What reading the PROXY header came to; `admitted` is false when the client it names is over its share.
    mutating func proxyHeaderRead(_ outcome: ProxyHeaderReader.Outcome, admitted: Bool) -> Step {
        guard phase == .proxyHeader else { return Step() }
        switch outcome {
        case .incomplete: return Step()
        case .unusable: phase = .closed(.handshake)
        case .header where !admitted: phase = .closed(.clientLimit)
        case .absent, .header: phase = .handshake
        }
        return Step(advanced: true)
    }

    /// What a handshake step came to; `http2` when ALPN chose `h2`.
    mutating func handshakeStepped(_ result: IOResult, http2: Bool, at now: Instant) -> Step {
        guard phase == .handshake else { return Step() }
        switch result {
        case .wantRead, .wantWrite:
            return Step()
        case .closed, .failed:
            phase = .closed(.handshake)
            return Step(advanced: true)
        case .done:
            guard !http2, sniffsPlainHTTP else {
                phase = .open(http2: http2)
                return Step(advanced: true)
            }
            phase = .sniffing
            // The header deadline, as either protocol would give a new connection for its first bytes.
            deadline = now + headerSeconds
            return Step(armTimer: deadline, advanced: true)
        }
    }

    /// Bytes read while sniffing: once they match the preface, or stop matching it, the protocol is chosen.
    mutating func sniffed(_ bytes: UnsafeRawBufferPointer) -> Step {
        guard phase == .sniffing else { return Step() }
        sniffed.append(contentsOf: bytes)
        let preface = HTTP2ConnectionMachine.preface
        let compared = min(sniffed.count, preface.count)
        let matches = sniffed.prefix(compared).elementsEqual(preface.prefix(compared))
        guard !matches || compared == preface.count else { return Step() }  // a prefix of the preface: read on
        phase = .open(http2: matches)
        return Step(advanced: true)
    }

    /// The client closed (or the read failed) before a protocol was chosen.
    mutating func peerClosed() -> Step {
        phase = .closed(.clientClosed)
        return Step(advanced: true)
    }

    mutating func timerFired(at now: Instant) -> Step {
        switch phase {
        case .proxyHeader, .handshake, .sniffing:
            guard now >= deadline else { return Step(armTimer: deadline) }
            phase = .closed(phase == .sniffing ? .idle : .handshake)
            return Step(advanced: true)
        case .open, .closed:
            return Step()
        }
    }

    /// Nothing has been asked of the server yet: the connection may be shed once idle for the grace period.
    func standing(at now: Instant, timeouts: ConnectionTimeouts) -> ConnectionStanding? {
        .idle(since: openedAt, at: now, timeouts: timeouts)
    }
}
