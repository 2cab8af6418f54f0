import Dispatch
import HTTPCore
import Synchronization

/// One client connection, and the only caller of its opening machine and its protocol driver. Events come from
/// outside: the socket's readiness and the timer (through its `ConnectionIO`), a handler's answer (through its
/// queue), the server draining or shedding it. For each, the connection tells the machine or driver what
/// happened, does what the returned step says, and then keeps the connection moving (handing out requests,
/// writing, reading) until it must wait for the socket, the timer or a handler. Nothing calls back into it while
/// it does, so no step can start inside another.
final class Connection: ConnectionEvents, @unchecked Sendable {  // touched only on `queue`
    let id: Int
    let queue: DispatchQueue
    private let io: any ConnectionIO
    private let environment: ConnectionEnvironment
    /// What it shares with the other connections of its queue.
    private let locals: QueueLocals
    private let clock: @Sendable () -> Instant
    /// Who the requests are from: the peer, or the client a trusted proxy names.
    private var identity: ClientIdentity
    /// The client this connection is counted under in `environment.clients`, once admitted.
    private var admitted: ClientGroup?
    private var opening: ConnectionOpening
    /// The protocol, once the opening chose it.
    private var driver: (any ProtocolDriver)?
    private var output = OutputBuffer()
    private var closed = false
    private var input = SocketInput()
    /// The last write found the socket full; the next waits until it is writable.
    private var writeBlocked = false
    /// A `streamWoke` is queued and has not begun: further wakes until it does are the same turn (an HTTP/2
    /// connection's streams all wake at each event of a feed, and one turn pulls every stream).
    private let wakeQueued = Atomic<Bool>(false)
    /// Reads in one turn on the queue before the connection steps aside (readiness is edge-triggered, so it
    /// queues its next turn itself).
    static let readsPerTurn = 4

    init(
        id: Int, io: any ConnectionIO, queue: DispatchQueue, peer: ClientAddress, admitted: ClientGroup?,
        environment: ConnectionEnvironment, locals: QueueLocals, clock: @escaping @Sendable () -> Instant = { .now }
    ) {
        self.id = id
        self.io = io
        self.queue = queue
        self.admitted = admitted
        self.environment = environment
        self.locals = locals
        self.clock = clock
        let configuration = environment.configuration
        identity = ClientIdentity(
            connection: peer, forwardingProxies: [], ipv6ClientPrefixLength: configuration.ipv6ClientPrefixLength)
        opening = ConnectionOpening(
            at: clock(), proxied: configuration.trustedProxies.contains { $0.contains(peer.ip) },
            sniffsPlainHTTP: configuration.tls == nil && configuration.http2.enabled, timeouts: configuration.timeouts)
    }

    /// Begins the opening steps. Call on `queue`, once the I/O reports events here.
    func start() {
        if let deadline = opening.start().armTimer { io.arm(deadline) }
        proceedOpening()
    }

    /// Asks the connection to finish what it is doing and close. Call on `queue`.
    func beginDrain() {
        guard !closed else { return }
        guard let driver else { return close(.shutdown) }  // nothing asked of the server yet
        proceed(driver.drain(at: clock(), output: &output))
    }

    /// Whether this connection may be shed at the connection cap, and how it stands. Call on `queue`.
    func standing(at now: Instant) -> ConnectionStanding? {
        guard !closed else { return nil }
        guard let driver else { return opening.standing(at: now, timeouts: environment.configuration.timeouts) }
        return driver.standing(at: now)
    }

    /// Closes the connection to let a waiting client in, if it may still be shed; false if it may not any more.
    /// Call on `queue`.
    func shed(at now: Instant) -> Bool {
        guard standing(at: now) != nil else { return false }
        environment.statistics.connectionShed()
        close(.shed)
        return true
    }

    /// Closes at once, abandoning any unsent output. Call on `queue`.
    func close(_ reason: CloseReason) {
        guard !closed else { return }
        closed = true
        output.removeAll()
        driver?.closed()
        // A peer that stopped reading gets a reset: the kernel would otherwise hold what it never read.
        if reason == .sendStalled { io.abort() } else { io.close() }
        if let admitted { environment.clients.release(admitted) }
        environment.statistics.connectionClosed(because: reason)
        environment.onClose(self)
    }

    // MARK: - Events

    func socketReadable() {
        input.becameReadable()
        guard !closed else { return }
        if driver == nil { proceedOpening() } else { proceed(DriverStep()) }
    }

    func socketWritable() {
        guard !closed else { return }
        writeBlocked = false
        input.becameWritable()
        if driver == nil { proceedOpening() } else { proceed(DriverStep()) }
    }

    func timerFired() {
        guard !closed else { return }
        let now = clock()
        guard let driver else {
            let step = opening.timerFired(at: now)
            if let deadline = step.armTimer { io.arm(deadline) }
            return proceedOpening()
        }
        proceed(driver.timerFired(at: now, output: &output))
    }

    /// Its turn after a wake (see `WakeList`), on `queue`.
    func wokenTurn() {
        // Cleared before the turn: a wake from here on may find something this turn does not.
        wakeQueued.store(false, ordering: .releasing)
        streamWoke()
    }

    /// A response's body stream has something new, back on `queue`.
    func streamWoke() {
        guard !closed, let driver else { return }
        proceed(driver.streamWoke(at: clock(), output: &output))
    }

    /// The response to a request handed out earlier, back on `queue`. One that comes after the connection closed
    /// is still reported, but not sent.
    func answered(_ response: HTTPResponse, for ticket: RequestTicket) {
        guard let driver else { return }
        let step = driver.answered(response, for: ticket, at: clock(), output: &output)
        guard !closed else { return output.removeAll() }
        proceed(step)
    }

    // MARK: - Moving on

    /// Does what `step` says, then keeps going until the connection has to wait, or has read `readsPerTurn` times:
    /// then it lets the other connections of its queue have a turn and goes on after them.
    private func proceed(_ step: DriverStep) {
        var step = step
        var reads = 0
        while let driver, carryOut(step) {
            let now = clock()
            if let (request, ticket) = driver.nextRequest(at: now) {
                let response = environment.answer(request, ticket: ticket, for: self)
                step = response.map { driver.answered($0, for: ticket, at: now, output: &output) } ?? DriverStep()
            } else if !output.isEmpty, !writeBlocked {
                let outcome = io.write(&output)
                if case .blocked = outcome { writeBlocked = true }
                step = driver.wrote(outcome, at: clock(), output: &output)
            } else if driver.isLingering {
                guard input.mayHaveInput, input.discard(io) != nil else { return }
                step = driver.peerClosed(at: clock())
            } else if driver.wantsInput, input.mayRead(io) {
                // A client that keeps sending (HTTP/2 streams answered at once, pipelined requests) would otherwise
                // hold the queue while the other connections' requests wait.
                guard reads < Self.readsPerTurn else { return queue.async { self.proceed(DriverStep()) } }
                reads += 1
                guard let read = read(driver) else { return }
                step = read
            } else {
                return
            }
        }
    }

    /// Arms the timer and ends the connection as `step` says; false once the connection is closed.
    private func carryOut(_ step: DriverStep) -> Bool {
        guard !closed else { return false }
        if let deadline = step.armTimer { io.arm(deadline) }
        switch step.ending {
        case nil:
            return true
        case .linger:
            guard io.shutdownOutput() else {
                close(.socketError)
                return false
            }
            return true
        case .close(let reason):
            close(reason)
            return false
        }
    }

    /// Reads once and hands the driver what came of it; nil when there is nothing to read now.
    private func read(_ driver: any ProtocolDriver) -> DriverStep? {
        switch input.read(io, into: locals.readBuffer) {
        case .bytes(let bytes)?: driver.received(bytes, at: clock(), output: &output)
        case .closed?: driver.peerClosed(at: clock())
        case .failed?: DriverStep(ending: .close(.socketError))
        case nil: nil
        }
    }

    // MARK: - Opening

    /// Takes the opening steps the socket allows now; once the protocol is chosen, starts its driver.
    private func proceedOpening() {
        while !closed {
            let step: ConnectionOpening.Step
            switch opening.phase {
            case .proxyHeader:
                step = readProxyHeader()
            case .handshake:
                step = opening.handshakeStepped(io.handshake(), http2: io.negotiatedHTTP2, at: clock())
            case .sniffing:
                guard input.mayRead(io) else { return }
                step = sniff()
            case .open(let http2):
                return startProtocol(http2: http2)
            case .closed(let reason):
                return close(reason)
            }
            if let deadline = step.armTimer { io.arm(deadline) }
            guard step.advanced else { return }
        }
    }

    /// Reads a trusted proxy's PROXY header, if it sends one: it names the client, which is admitted under the
    /// per-client limit. A proxy that sends none may forward clients per request, in `X-Forwarded-For` (see
    /// `ServerConfiguration.forwardedForProxies` for when that is believed).
    private func readProxyHeader() -> ConnectionOpening.Step {
        let outcome = io.readProxyHeader()
        var admittedClient = true
        switch outcome {
        case .absent:
            identity.forwardingProxies = environment.configuration.forwardedForProxies
        case .header(let client?, let port):
            identity.connection = ClientAddress(ip: client, port: port)
            let group = environment.configuration.clientGroup(of: client)
            admittedClient = environment.clients.admit(group)
            if admittedClient {
                admitted = group
            } else {
                environment.statistics.connectionRefused(reason: "client_connection_limit")
            }
        case .header(nil, _), .incomplete, .unusable:
            break
        }
        return opening.proxyHeaderRead(outcome, admitted: admittedClient)
    }

    /// Reads the first bytes of a plain connection for the opening to tell the protocol by.
    private func sniff() -> ConnectionOpening.Step {
        switch input.read(io, into: locals.readBuffer) {
        case .bytes(let bytes)?: opening.sniffed(bytes)
        case .closed?, .failed?: opening.peerClosed()
        case nil: ConnectionOpening.Step()
        }
    }

    private func startProtocol(http2: Bool) {
        let now = clock()
        let configuration = environment.configuration
        let recorder = RequestRecorder(
            prefix: environment.requestIDPrefix, connectionID: id, identity: identity,
            observe: environment.handler.observe)
        // Weak: a stream that outlives the connection must not keep it.
        let wake: @Sendable () -> Void = { [weak self, wakes = locals.wakes] in
            guard let connection = self else { return }
            guard !connection.wakeQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
            wakes.add(connection)
        }
        let driver: any ProtocolDriver =
            if http2 {
                HTTP2Driver(
                    configuration, recorder: recorder, dates: locals.dates, statistics: environment.statistics,
                    at: now, wake: wake)
            } else {
                HTTP1Driver(configuration, recorder: recorder, dates: locals.dates, at: now, wake: wake)
            }
        self.driver = driver
        var step = driver.start(at: now, output: &output)
        // The bytes read to choose the protocol are the first it reads.
        if !opening.sniffed.isEmpty {
            step.merge(opening.sniffed.withUnsafeBytes { driver.received($0, at: now, output: &output) })
        }
        proceed(step)
    }
}
