import Dispatch
import Logging
import Syscalls
#if canImport(Glibc)
import Glibc
#endif

/// Takes connections off a listening socket while there is room for them: past the connection cap it leaves
/// clients in the listen backlog until one closes, asking meanwhile for a connection to be shed to make room (see
/// `ConnectionStanding`), and when `accept` itself fails (EMFILE and friends) it backs off instead of spinning on
/// a listener that stays readable.
final class Acceptor: @unchecked Sendable {  // all mutable state is touched only on `queue`
    /// How long to wait before accepting again after `accept` failed.
    static let retrySeconds = 0.5
    /// How often to look, while at the cap, for a waiting client and for a connection that may be shed.
    static let roomCheckSeconds = 0.25

    private let listener: ListeningSocket
    private let queue: DispatchQueue
    private let logger: Logger
    private let hasRoom: @Sendable () -> Bool
    private let open: @Sendable (_ fd: Int32, _ peer: ClientAddress) -> Void
    private let makeRoom: @Sendable (_ count: Int, _ done: @escaping @Sendable (_ shed: Bool) -> Void) -> Void
    private var source: (any DispatchSourceRead)?
    private var paused = false
    /// `accept` failed last time, and accepting waits for the retry.
    private var failing = false
    private var failures = AcceptFailures()
    private var askingForRoom = false
    private var roomCheckScheduled = false

    /// An acceptor for `listener`; `hasRoom` says whether another connection may open, `open` takes one, and
    /// `makeRoom` sheds up to `count` open connections that may be, then calls `done` on `queue` with whether it
    /// shed any (their closes then call `resume`).
    init(
        listener: ListeningSocket, queue: DispatchQueue, logger: Logger, hasRoom: @escaping @Sendable () -> Bool,
        open: @escaping @Sendable (_ fd: Int32, _ peer: ClientAddress) -> Void,
        makeRoom: @escaping @Sendable (_ count: Int, _ done: @escaping @Sendable (_ shed: Bool) -> Void) -> Void
    ) {
        self.listener = listener
        self.queue = queue
        self.logger = logger
        self.hasRoom = hasRoom
        self.open = open
        self.makeRoom = makeRoom
    }

    /// Starts accepting. Call on `queue`.
    func start() {
        let source = DispatchSource.makeReadSource(fileDescriptor: listener.fd, queue: queue)
        source.setEventHandler { [weak self] in self?.acceptPending() }
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
                askForRoom()
                return
            }
            do {
                guard let accepted = try listener.accept() else { return }
                failing = false
                open(accepted.fd, accepted.peer)
            } catch {
                // Log once per episode, then retry on a timer.
                if failures.failed(at: .now) {
                    logger.log(.warn, "accept_failed", ["error": "\(error)", "action": "retry_every_500ms"])
                }
                failing = true
                pause()
                queue.asyncAfter(deadline: .now() + Self.retrySeconds) { self.resume() }
                return
            }
        }
    }

    /// At the cap: while clients wait in the backlog, asks for as many connections to be shed; looks again every
    /// `roomCheckSeconds` while none could be or none waits, since a suspended source reports no new arrivals.
    private func askForRoom() {
        guard paused, !failing, !askingForRoom, source != nil else { return }
        let waiting = listener.waitingConnections
        guard waiting > 0 else { return checkRoomLater() }
        askingForRoom = true
        makeRoom(waiting) { shed in
            self.askingForRoom = false
            // The shed connections' closes have resumed accepting by now; if that filled the cap again, go on.
            if shed { self.askForRoom() } else { self.checkRoomLater() }
        }
    }

    private func checkRoomLater() {
        guard !roomCheckScheduled else { return }
        roomCheckScheduled = true
        queue.asyncAfter(deadline: .now() + Self.roomCheckSeconds) {
            self.roomCheckScheduled = false
            self.askForRoom()
        }
    }

    private func pause() {
        guard !paused, let source else { return }
        source.suspend()
        paused = true
    }
}
