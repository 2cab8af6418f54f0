import CEpoll
import Dispatch
import Syscalls

/// The store's loop: the sockets of the connections that have a statement in flight, watched from one epoll set
/// by one Dispatch read source, and every database deadline (`LoopTimers`), served on one serial queue. Nothing
/// on it blocks, so a handful of threads serve every database wait, however many requests wait.
///
/// Level-triggered, unlike the HTTP server's edge-triggered loop: libpq reads what it can at each call, and a
/// socket with unread data simply fires again.
final class PGEventLoop: @unchecked Sendable {  // `handlers` is touched only on `queue`
    let queue = DispatchQueue(label: "chatterd.db-loop")
    /// Every deadline of the store: statements', waits for a connection, queued posts', the listener's checks.
    let timers: LoopTimers
    private let set: EpollSet
    private var handlers: [Int32: () -> Void] = [:]

    /// Creates the loop, taking ready sockets 32 at a time; stops the process if the kernel has no epoll set to
    /// give (out of descriptors at start-up).
    init() {
        timers = LoopTimers(queue: queue)
        do {
            set = try EpollSet(batch: 32)
        } catch {
            preconditionFailure("\(error)")
        }
        queue.setSpecific(key: Self.identity, value: ObjectIdentifier(self))
        // A handler removed by an earlier event of the same batch is skipped.
        set.start(on: queue) { [weak self] event in self?.handlers[event.data.fd]?() }
    }

    private static let identity = DispatchSpecificKey<ObjectIdentifier>()

    /// Whether the caller runs on this loop's queue (a batch's task does), so that it need not queue work there.
    private var isCurrent: Bool {
        DispatchQueue.getSpecific(key: Self.identity) == ObjectIdentifier(self)
    }

    /// Runs `work` on the loop: at once when already there, else queued.
    func execute(_ work: @escaping @Sendable () -> Void) {
        if isCurrent { work() } else { queue.async(execute: work) }
    }

    /// Calls `handler` on `queue` whenever `fd` is readable, or also writable when `writable`, until `unwatch`;
    /// a second call for the same `fd` changes what is watched. Call on `queue`.
    /// - Returns: false when the kernel refuses the socket (it is closed).
    func watch(_ fd: Int32, writable: Bool, _ handler: @escaping () -> Void) -> Bool {
        let events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | (writable ? EPOLLOUT.rawValue : 0)
        let known = handlers[fd] != nil
        // A handler left for a socket that was closed since, its number now reused, finds nothing to modify:
        // the new socket is added instead.
        guard (try? set.control(known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, events: events)) != nil
            || (known && (try? set.control(EPOLL_CTL_ADD, fd, events: events)) != nil)
        else { return false }
        handlers[fd] = handler
        return true
    }

    /// Stops watching `fd` and lets go of its handler. Call on `queue`, before the socket is closed.
    func unwatch(_ fd: Int32) {
        guard handlers.removeValue(forKey: fd) != nil else { return }
        try? set.control(EPOLL_CTL_DEL, fd)
    }
}
