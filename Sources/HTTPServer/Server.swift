import Dispatch
import HTTPCore
import Locking
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Accepts connections and spreads them over serial I/O queues; owns the listener, the set of open connections
/// and graceful shutdown. Nothing else.
public final class Server: @unchecked Sendable {  // mutable state is in `connections` (Locked) or confined to `controlQueue`
    private let configuration: ServerConfiguration
    /// The certificate and key new connections use; replaced by `reloadCertificate`. Nil for plain HTTP.
    private let tls: Locked<TLSContext>?
    private let logger: Logger
    private let statistics: ServerStatistics
    private let handler: HTTPHandler
    private let clients: ClientConnections
    private let requestIDPrefix = RequestID.randomPrefix()
    /// One per core: each serves its connections' sockets from one epoll set (see `ReadinessLoop`).
    private let loops: [ReadinessLoop]
    /// What the connections of each loop's queue share.
    private let locals: [QueueLocals]
    /// Where accepting and shutting down happen.
    private let controlQueue = DispatchQueue(label: "chatterd.accept")

    private struct Connections {
        var open: [Int: Connection] = [:]
        var lastID = 0
    }
    private let connections = Locked(Connections())

    // Confined to controlQueue.
    private var acceptor: Acceptor?
    private var shutdown = ShutdownMachine()
    private var shutdownTimer: (any DispatchSourceTimer)?
    private var shutdownCompletion: (@Sendable () -> Void)?

    /// Loads the TLS context (if configured); throws if the certificate or key is unusable. `logger` gets the
    /// server's own events (those not tied to a request); `statistics` is kept up to date for metrics.
    public init(
        configuration: ServerConfiguration, handler: HTTPHandler, logger: Logger,
        statistics: ServerStatistics = ServerStatistics()
    ) throws {
        // OpenSSL's socket BIO writes with write(2): a client resetting mid-response must not kill the process.
        signal(SIGPIPE, SIG_IGN)
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
        self.statistics = statistics
        clients = ClientConnections(limit: configuration.maxConnectionsPerClient)
        let context = try configuration.tls.map { try TLSContext($0, offeringHTTP2: configuration.http2.enabled) }
        self.tls = context.map { Locked($0) }
        statistics.certificateNotAfter = context?.notAfter
        self.loops = try (0..<max(1, configuration.ioQueueCount)).map { index in
            try ReadinessLoop(queue: DispatchQueue(label: "chatterd.io.\(index)"))
        }
        locals = loops.map { _ in QueueLocals() }
    }

    /// Binds and starts accepting; returns the bound port.
    public func start() throws -> UInt16 {
        let listener = try ListeningSocket(
            host: configuration.host, port: configuration.port, backlog: configuration.listenBacklog,
            reusePort: configuration.reusePort, maxUnsentBytes: configuration.maxUnsentBytesPerConnection)
        let acceptor = Acceptor(
            listener: listener, queue: controlQueue, logger: logger,
            // Weak: an accept queued as the server goes must find nothing, not a freed server.
            hasRoom: { [weak self] in self.map { $0.openConnectionCount < $0.configuration.maxConnections } ?? false },
            open: { [weak self] fd, peer in
                guard let self else { return _ = Glibc.close(fd) }
                self.open(fd, peer: peer)
            },
            makeRoom: { [weak self] count, done in
                guard let self else { return done(false) }
                self.shed(upTo: count, then: done)
            })
        controlQueue.sync {
            self.acceptor = acceptor
            acceptor.start()
        }
        return listener.port
    }

    /// Loads the certificate and key again from their files: new handshakes use the new pair, connections
    /// already open keep theirs. A pair that cannot be loaded (unreadable, mismatched, expired) is refused
    /// and the old one stays. Returns the new certificate's expiry (seconds since 1970), or nil on plain HTTP,
    /// where there is nothing to reload.
    public func reloadCertificate() throws(TLSError) -> Double? {
        guard let tls, let paths = configuration.tls else { return nil }
        let context = try TLSContext(paths, offeringHTTP2: configuration.http2.enabled)
        tls.withLock { $0 = context }
        statistics.certificateNotAfter = context.notAfter
        return context.notAfter
    }

    /// When the serving certificate expires (seconds since 1970); nil on plain HTTP.
    public var certificateNotAfter: Double? { statistics.certificateNotAfter }

    /// Connections currently open.
    public var openConnectionCount: Int { connections.withLock { $0.open.count } }

    /// Graceful shutdown: stop accepting, close idle connections, let requests in flight finish, force-close
    /// what remains at the deadline, then call `completion` (on an internal queue).
    public func shutdown(deadlineSeconds: Double, completion: @escaping @Sendable () -> Void) {
        controlQueue.async {
            self.shutdownCompletion = completion
            self.perform(self.shutdown.begin(
                openConnections: self.openConnectionCount, deadlineSeconds: deadlineSeconds, at: .now))
        }
    }

    private func open(_ fd: Int32, peer: ClientAddress) {
        // A trusted proxy's connection is counted under the client its PROXY header names, once it is read.
        let trusted = configuration.trustedProxies.contains { $0.contains(peer.ip) }
        let client = configuration.clientGroup(of: peer.ip)
        if !trusted, !clients.admit(client) {
            statistics.connectionRefused(reason: "client_connection_limit")
            Glibc.close(fd)
            return
        }
        let transport: any Transport
        if let tls {
            guard let session = TLSTransport(context: tls.withLock { $0 }, fd: fd) else {
                Glibc.close(fd)
                return
            }
            transport = session
        } else {
            transport = PlainTransport(fd: fd)
        }
        let environment = ConnectionEnvironment(
            configuration: configuration, handler: handler, statistics: statistics,
            clients: clients, requestIDPrefix: requestIDPrefix,
            onClose: { [weak self] connection in self?.closed(connection) })
        let id = connections.withLock { state in
            state.lastID += 1
            return state.lastID
        }
        let loop = loops[id % loops.count]
        let io = SocketIO(fd: fd, transport: transport, loop: loop)
        let connection = Connection(
            id: id, io: io, queue: loop.queue, peer: peer, admitted: trusted ? nil : client,
            environment: environment, locals: locals[id % loops.count])
        connections.withLock { $0.open[id] = connection }
        statistics.connectionOpened()
        loop.queue.async {
            do {
                try io.start(reporting: connection)
            } catch {
                return connection.close(.socketError)
            }
            connection.start()
        }
    }

    /// Most connections shed in one round, so that one round's work stays small; the next round follows at once.
    private static let maxShedPerRound = 64

    /// At the cap with `count` clients waiting: closes up to that many of the open connections that stand lowest
    /// (see `ConnectionStanding`), if any may be shed. Each I/O queue reports its own connections. Calls `done` on
    /// `controlQueue` with whether any was shed.
    private func shed(upTo count: Int, then done: @escaping @Sendable (_ shed: Bool) -> Void) {
        let open = connections.withLock { Array($0.open.values) }
        let found = Locked([(connection: Connection, standing: ConnectionStanding)]())
        let group = DispatchGroup()
        let now = Instant.now
        for loop in loops {
            let theirs = open.filter { $0.queue === loop.queue }
            loop.queue.async(group: group) {
                let standings = theirs.compactMap { connection in connection.standing(at: now).map { (connection, $0) } }
                found.withLock { $0 += standings }
            }
        }
        group.notify(queue: controlQueue) {
            let limit = min(count, Self.maxShedPerRound)
            let victims = found.withLock { $0.sorted { $0.standing < $1.standing }.prefix(limit).map(\.connection) }
            let shed = Locked(0)
            let closing = DispatchGroup()
            for victim in victims {
                victim.queue.async(group: closing) {
                    if victim.shed(at: .now) { shed.withLock { $0 += 1 } }
                }
            }
            closing.notify(queue: self.controlQueue) { done(shed.withLock { $0 } > 0) }
        }
    }

    private func closed(_ connection: Connection) {
        let remaining = connections.withLock { state in
            state.open.removeValue(forKey: connection.id)
            return state.open.count
        }
        statistics.connectionClosed()
        controlQueue.async {
            self.acceptor?.resume()
            self.perform(self.shutdown.connectionsChanged(openConnections: remaining))
        }
    }

    /// Carries out the shutdown machine's actions. On `controlQueue`.
    private func perform(_ actions: [ShutdownMachine.Action]) {
        for action in actions {
            switch action {
            case .stopAccepting:
                acceptor?.stop()
                acceptor = nil
            case .drainConnections:
                forEachConnection { $0.beginDrain() }
            case .closeConnections:
                forEachConnection { $0.close(.shutdown) }
            case .armTimer(let deadline):
                if shutdownTimer == nil {
                    let timer = DispatchSource.makeTimerSource(queue: controlQueue)
                    timer.setEventHandler { [weak self] in
                        guard let self else { return }
                        self.perform(self.shutdown.timerFired(at: .now))
                    }
                    timer.resume()
                    shutdownTimer = timer
                }
                shutdownTimer?.schedule(deadline: deadline.dispatchTime, leeway: .milliseconds(10))
            case .finish:
                shutdownTimer?.cancel()
                shutdownTimer = nil
                shutdownCompletion?()
                shutdownCompletion = nil
            }
        }
    }

    private func forEachConnection(_ body: @escaping @Sendable (Connection) -> Void) {
        for connection in connections.withLock({ Array($0.open.values) }) {
            connection.queue.async { body(connection) }
        }
    }
}
