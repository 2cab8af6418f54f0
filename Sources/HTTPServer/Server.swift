import Dispatch
import HTTPCore
import Locking
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Accepts connections and spreads them over serial I/O queues; owns the listener, the set of
/// open connections, and graceful shutdown. Nothing else.
public final class Server: @unchecked Sendable {  // mutable state is in `registry` (Locked) or confined to `acceptQueue`
    private let configuration: ServerConfiguration
    private let tls: TLSContext?
    private let logger: Logger
    private let statistics: ServerStatistics
    let acceptQueue = DispatchQueue(label: "chatterd.accept")
    private let ioQueues: [DispatchQueue]
    let handlers: HandlerPool
    private let dates = DateCache()
    private let requestIDPrefix = RequestID.randomPrefix()
    private let handler: HTTPHandler

    struct Registry {
        var connections: [Int: Connection] = [:]
        var nextID = 0
    }
    let registry = Locked(Registry())

    // Confined to acceptQueue.
    private var listener: ListeningSocket?
    var acceptSource: (any DispatchSourceRead)?
    var acceptPaused = false
    private var acceptFailing = false

    /// Loads the TLS context (if configured); throws if the certificate or key is unusable. `logger` gets the
    /// server's own events (those not tied to a request); `statistics` is kept up to date for metrics.
    public init(
        configuration: ServerConfiguration, handler: HTTPHandler, logger: Logger,
        statistics: ServerStatistics = ServerStatistics()
    ) throws {
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
        self.statistics = statistics
        self.tls = try configuration.tls.map { try TLSContext($0) }
        self.ioQueues = (0..<max(1, configuration.ioQueueCount)).map { DispatchQueue(label: "chatterd.io.\($0)") }
        self.handlers = HandlerPool(
            threadCount: configuration.handlerThreadCount, maxQueued: configuration.maxQueuedRequests,
            maxWaitSeconds: configuration.maxQueueWaitSeconds)
    }

    /// Binds and starts accepting; returns the bound port.
    public func start() throws -> UInt16 {
        let listener = try ListeningSocket(
            host: configuration.host, port: configuration.port, backlog: configuration.listenBacklog,
            reusePort: configuration.reusePort)
        acceptQueue.sync {
            self.listener = listener
            let source = DispatchSource.makeReadSource(fileDescriptor: listener.fd, queue: acceptQueue)
            source.setEventHandler { [unowned self] in self.acceptPending() }
            source.setCancelHandler { Glibc.close(listener.fd) }
            acceptSource = source
            source.resume()
        }
        return listener.port
    }

    /// Connections currently open.
    public var openConnectionCount: Int { registry.withLock { $0.connections.count } }

    private func acceptPending() {
        while acceptSource != nil {
            guard openConnectionCount < configuration.maxConnections else {
                // Leave further clients in the listen backlog until a connection closes.
                pauseAccepting()
                return
            }
            do {
                guard let accepted = try listener?.accept() else { return }
                acceptFailing = false
                open(accepted.fd, peer: accepted.peer)
            } catch {
                // EMFILE/ENFILE and friends: back off instead of spinning on a readable listener; log once per episode.
                if !acceptFailing {
                    logger.log(.warn, "accept_failed", ["error": "\(error)", "action": "retry_every_500ms"])
                }
                acceptFailing = true
                pauseAccepting()
                acceptQueue.asyncAfter(deadline: .now() + 0.5) { self.resumeAccepting() }
                return
            }
        }
    }

    private func open(_ fd: Int32, peer: String) {
        let transport: any Transport
        if let tls {
            guard let session = TLSTransport(context: tls, fd: fd) else {
                Glibc.close(fd)
                return
            }
            transport = session
        } else {
            transport = PlainTransport(fd: fd)
        }
        let environment = ConnectionEnvironment(
            configuration: configuration, handler: handler, handlers: handlers, dates: dates,
            requestIDPrefix: requestIDPrefix, onClose: { [weak self] connection in self?.closed(connection) })
        let id = registry.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let queue = ioQueues[id % ioQueues.count]
        let connection = Connection(
            id: id, fd: fd, remoteAddress: peer, queue: queue, transport: transport, environment: environment)
        registry.withLock { $0.connections[id] = connection }
        statistics.connectionOpened()
        queue.async { connection.start() }
    }

    private func closed(_ connection: Connection) {
        registry.withLock { _ = $0.connections.removeValue(forKey: connection.id) }
        statistics.connectionClosed()
        acceptQueue.async { self.resumeAccepting() }
    }

    private func pauseAccepting() {
        guard !acceptPaused, let acceptSource else { return }
        acceptSource.suspend()
        acceptPaused = true
    }

    private func resumeAccepting() {
        guard acceptPaused, let acceptSource, openConnectionCount < configuration.maxConnections else { return }
        acceptSource.resume()
        acceptPaused = false
    }
}
