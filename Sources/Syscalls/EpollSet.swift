import CEpoll
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// An epoll set whose readiness one Dispatch read source reports on one queue: each time the set becomes readable,
/// every ready event is handed on, `batch` at a time, until none is left, so under load one wake-up serves many
/// descriptors. Whether a descriptor is level- or edge-triggered (`EPOLLET`) is its registration's choice.
public final class EpollSet: @unchecked Sendable {  // after `start`, touched only on its queue
    private let epoll: Int32
    private var source: (any DispatchSourceRead)?
    private var events: [epoll_event]

    /// An empty set, reporting nothing until `start`.
    public init(batch: Int) throws(SyscallError) {
        precondition(batch > 0, "ready events are taken at least one at a time")
        epoll = try Syscall.run("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        events = Array(repeating: epoll_event(), count: batch)
    }

    deinit {
        source?.cancel()
        close(epoll)
    }

    /// Calls `ready` on `queue` with each ready event from now on. Call once.
    public func start(on queue: DispatchQueue, _ ready: @escaping (epoll_event) -> Void) {
        precondition(source == nil, "an epoll set is started once")
        let source = DispatchSource.makeReadSource(fileDescriptor: epoll, queue: queue)
        // Weak: an event queued as the set goes (its owner freed on another thread) must find nothing.
        source.setEventHandler { [weak self] in self?.takeReady(ready) }
        self.source = source
        source.resume()
    }

    /// Adds `fd` (`EPOLL_CTL_ADD`), changes what it is watched for (`EPOLL_CTL_MOD`) or removes it (`EPOLL_CTL_DEL`).
    public func control(_ operation: Int32, _ fd: Int32, events: UInt32 = 0) throws(SyscallError) {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        try Syscall.run("epoll_ctl") { epoll_ctl(epoll, operation, fd, &event) }
    }

    private func takeReady(_ ready: (epoll_event) -> Void) {
        while true {
            let count = events.withUnsafeMutableBufferPointer { buffer in
                (try? Syscall.run("epoll_wait") { epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), 0) }) ?? 0
            }
            for index in 0..<Int(count) { ready(events[index]) }
            guard count == events.count else { return }
        }
    }
}
