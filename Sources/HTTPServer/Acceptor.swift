import Dispatch
import Logging
import Syscalls
#if canImport(Glibc)
import Glibc
#endif

/// Takes connections off a listening socket while there is room for them: past the connection cap it leaves
/// clients in the listen backlog until one closes, and when `accept` itself fails (EMFILE and friends) it backs
/// off instead of spinning on a listener that stays readable.
final class Acceptor: @unchecked Sendable {  // all mutable state is touched only on `queue`
    /// How long to wait before accepting again after `accept` failed.
    static let retrySeconds = 0.5

    private let listener: ListeningSocket
    private let queue: DispatchQueue
    private let logger: Logger
    private let hasRoom: @Sendable () -> Bool
    private let open: @Sendable (_ fd: Int32, _ peer: ClientAddress) -> Void
    private var source: (any DispatchSourceRead)?
    private var paused = false
    private var failing = false

    /// An acceptor for `listener`; `hasRoom` says whether another connection may open, `open` takes one.
    init(
        listener: ListeningSocket, queue: DispatchQueue, logger: Logger, hasRoom: @escaping @Sendable () -> Bool,
        open: @escaping @Sendable (_ fd: Int32, _ peer: ClientAddress) -> Void
    ) {
        self.listener = listener
        self.queue = queue
        self.logger = logger
        self.hasRoom = hasRoom
        self.open = open
    }

    /// Starts accepting. Call on `queue`.
    func start() {
        let source = DispatchSource.makeReadSource(fileDescriptor: listener.fd, queue: queue)
        source.setEventHandler { [unowned self] in self.acceptPending() }
        let fd = listener.fd
        source.setCancelHandler { Glibc.close(fd) }
        self.source = source
        source.resume()
    }

    /// A connection closed, so there may be room again. Call on `queue`.
    func resume() {
        guard paused, let source, hasRoom() else { return }
        source.resume()
        paused = false
    }

    /// Stops accepting and closes the listening socket. Call on `queue`.
    func stop() {
        guard let source else { return }
        // A suspended source never runs its cancel handler (which closes the listener).
        if paused { source.resume() }
        source.cancel()
        self.source = nil
    }

    private func acceptPending() {
        while source != nil {
            guard hasRoom() else {
                pause()
                return
            }
            do {
                guard let accepted = try listener.accept() else { return }
                failing = false
                open(accepted.fd, accepted.peer)
            } catch {
                // Log once per episode, then retry on a timer.
                if !failing {
                    logger.log(.warn, "accept_failed", ["error": "\(error)", "action": "retry_every_500ms"])
                }
                failing = true
                pause()
                queue.asyncAfter(deadline: .now() + Self.retrySeconds) { self.resume() }
                return
            }
        }
    }

    private func pause() {
        guard !paused, let source else { return }
        source.suspend()
        paused = true
    }
}
