import CEpoll
import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// The sockets of the connections that have a statement in flight, watched from one epoll set by one Dispatch
/// read source, and served on one serial queue: the store's readiness loop. Nothing on it blocks, so a handful
/// of threads serve every database wait, however many requests wait.
///
/// Level-triggered, unlike the HTTP server's edge-triggered loop: libpq reads what it can at each call, and a
/// socket with unread data simply fires again.
final class PGEventLoop: @unchecked Sendable {  // `handlers` is touched only on `queue`
    let queue = DispatchQueue(label: "chatterd.db-loop")
    private let epoll: Int32
    private var source: (any DispatchSourceRead)?
    private var handlers: [Int32: () -> Void] = [:]
    /// Ready sockets are taken this many at a time.
    private static let batch = 32
    private var events = [epoll_event](repeating: epoll_event(), count: batch)

    /// Creates the loop; stops the process if the kernel has no epoll set to give (out of descriptors at start-up).
    init() {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epoll >= 0, "epoll_create1 failed: errno \(errno)")
        let source = DispatchSource.makeReadSource(fileDescriptor: epoll, queue: queue)
        source.setEventHandler { [unowned self] in self.serveReady() }
        self.source = source
        source.resume()
    }

    deinit {
        source?.cancel()
        close(epoll)
    }

    /// Calls `handler` on `queue` whenever `fd` is readable, or also writable when `writable`, until `unwatch`;
    /// a second call for the same `fd` changes what is watched. Call on `queue`.
    /// - Returns: false when the kernel refuses the socket (it is closed).
    func watch(_ fd: Int32, writable: Bool, _ handler: @escaping () -> Void) -> Bool {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | (writable ? EPOLLOUT.rawValue : 0)
        event.data.fd = fd
        let operation = handlers[fd] == nil ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
        guard epoll_ctl(epoll, operation, fd, &event) == 0 else { return false }
        handlers[fd] = handler
        return true
    }

    /// Stops watching `fd` and lets go of its handler. Call on `queue`, before the socket is closed.
    func unwatch(_ fd: Int32) {
        guard handlers.removeValue(forKey: fd) != nil else { return }
        var event = epoll_event()
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &event)
    }

    /// Serves every ready socket, a batch at a time, until none is left.
    private func serveReady() {
        while true {
            let count = events.withUnsafeMutableBufferPointer { buffer in
                epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), 0)
            }
            guard count > 0 else { return }
            for index in 0..<Int(count) {
                // A handler removed by an earlier event of this batch is skipped.
                handlers[events[index].data.fd]?()
            }
            guard count == Self.batch else { return }
        }
    }
}
