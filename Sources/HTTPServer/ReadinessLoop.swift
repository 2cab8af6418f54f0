import CEpoll
import Dispatch
import Syscalls
#if canImport(Glibc)
import Glibc
#endif

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
    private let epoll: Int32
    private var source: (any DispatchSourceRead)?
    /// Each registered socket's client, by descriptor (descriptors are small and reused, so this stays short).
    private var clients: [(any ReadinessClient)?] = []
    /// Ready sockets are taken this many at a time.
    private static let batch = 128
    private var events = [epoll_event](repeating: epoll_event(), count: batch)

    /// A loop serving sockets on `queue`.
    init(queue: DispatchQueue) throws(SyscallError) {
        self.queue = queue
        epoll = try Syscall.run("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        let source = DispatchSource.makeReadSource(fileDescriptor: epoll, queue: queue)
        source.setEventHandler { [unowned self] in self.serveReady() }
        self.source = source
        source.resume()
    }

    deinit {
        source?.cancel()
        Glibc.close(epoll)
    }

    /// Reports `fd`'s readiness to `client` from now on, until `remove`. Call on `queue`.
    func add(_ fd: Int32, _ client: any ReadinessClient) throws(SyscallError) {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
        event.data.fd = fd
        try Syscall.run("epoll_ctl ADD") { epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) }
        if Int(fd) >= clients.count { clients += Array(repeating: nil, count: Int(fd) + 1 - clients.count) }
        clients[Int(fd)] = client
    }

    /// Stops reporting `fd` and lets go of its client. Call on `queue`, before closing `fd`.
    func remove(_ fd: Int32) {
        if Int(fd) < clients.count { clients[Int(fd)] = nil }
        var event = epoll_event()
        // Fails only if the fd was never added; closing it would drop it from the set anyway.
        _ = try? Syscall.run("epoll_ctl DEL") { epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &event) }
    }

    /// Serves every ready socket, a batch at a time, until none is left.
    private func serveReady() {
        while true {
            let count = events.withUnsafeMutableBufferPointer { buffer in
                (try? Syscall.run("epoll_wait") { epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), 0) }) ?? 0
            }
            for index in 0..<Int(count) {
                let event = events[index]
                // A client removed by an earlier event of this batch is skipped.
                guard let client = clients[Int(event.data.fd)] else { continue }
                let flags = event.events
                if flags & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
                    client.socketReadable()
                }
                if flags & (EPOLLOUT.rawValue | EPOLLERR.rawValue) != 0, clients[Int(event.data.fd)] != nil {
                    client.socketWritable()
                }
            }
            guard count == Self.batch else { return }
        }
    }
}
