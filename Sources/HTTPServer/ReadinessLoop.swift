import CEpoll
import Dispatch
import Syscalls

/// What a socket registered with a `ReadinessLoop` is told, on the loop's queue.
protocol ReadinessClient: AnyObject {
    /// The socket may have become readable (or the peer hung up): read until it would block.
    func socketReadable()
    /// The socket may have become writable: write until it would block.
    func socketWritable()
}

/// The readiness of every socket on one I/O queue, from one epoll set watched by one Dispatch read source.
/// Each time the source fires, every socket that is ready is served in that one pass, so under load a wake-up
/// does the work of many; and a socket is registered once, edge-triggered for reading and writing, so
/// suspending or resuming its reads or writes is a flag in its connection, not a system call.
///
/// Edge-triggered means a socket is reported when it becomes ready, not while it is: a client must read (or
/// write) until the call would block before it can expect to hear again, and must remember readiness it
/// chose not to act on.
final class ReadinessLoop: @unchecked Sendable {  // all mutable state is touched only on `queue`
    let queue: DispatchQueue
    private let set: EpollSet
    /// Each registered socket's client, by descriptor (descriptors are small and reused, so this stays short).
    private var clients: [(any ReadinessClient)?] = []

    /// A loop serving sockets on `queue`; ready sockets are taken 128 at a time.
    init(queue: DispatchQueue) throws(SyscallError) {
        self.queue = queue
        set = try EpollSet(batch: 128)
        // Weak: an event queued as the loop goes must find nothing, not a freed loop.
        set.start(on: queue) { [weak self] event in self?.serve(event) }
    }

    /// Reports `fd`'s readiness to `client` from now on, until `remove`. Call on `queue`.
    func add(_ fd: Int32, _ client: any ReadinessClient) throws(SyscallError) {
        try set.control(
            EPOLL_CTL_ADD, fd, events: EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue)
        if Int(fd) >= clients.count { clients += Array(repeating: nil, count: Int(fd) + 1 - clients.count) }
        clients[Int(fd)] = client
    }

    /// Stops reporting `fd` and lets go of its client. Call on `queue`, before closing `fd`.
    func remove(_ fd: Int32) {
        if Int(fd) < clients.count { clients[Int(fd)] = nil }
        // Fails only if the fd was never added; closing it would drop it from the set anyway.
        try? set.control(EPOLL_CTL_DEL, fd)
    }

    /// Tells a ready socket's client what it may do now.
    private func serve(_ event: epoll_event) {
        // A client removed by an earlier event of the same batch is skipped.
        guard let client = clients[Int(event.data.fd)] else { return }
        let flags = event.events
        if flags & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
            client.socketReadable()
        }
        if flags & (EPOLLOUT.rawValue | EPOLLERR.rawValue) != 0, clients[Int(event.data.fd)] != nil {
            client.socketWritable()
        }
    }
}
