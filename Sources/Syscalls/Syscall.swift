#if canImport(Glibc)
import Glibc
#endif

/// The one place system calls are retried and their failures turned into errors, so no caller writes its
/// own `EINTR` loop or drops a result on the floor.
///
/// `EINTR` is retried; `EAGAIN`/`EWOULDBLOCK` is `.wouldBlock` where a call may block; any other failure
/// throws a `SyscallError` naming the call and its `errno`.
public enum Syscall {
    /// The outcome of a call on a non-blocking descriptor.
    public enum Outcome<Value>: Equatable where Value: Equatable {
        /// The call succeeded with this result.
        case done(Value)
        /// The descriptor is not ready (`EAGAIN`/`EWOULDBLOCK`); try again when it is.
        case wouldBlock
    }

    /// Runs `call` (which returns -1 and sets `errno` on failure) until it is not interrupted.
    /// - Throws: `SyscallError` for any failure but `EINTR`.
    @discardableResult
    public static func run<Result: BinaryInteger>(
        _ name: String, _ call: () -> Result
    ) throws(SyscallError) -> Result {
        while true {
            let result = call()
            if result >= 0 { return result }
            let code = errno
            if code != EINTR { throw SyscallError(name, errno: code) }
        }
    }

    /// As `run`, for a call on a non-blocking descriptor: `EAGAIN`/`EWOULDBLOCK` is `.wouldBlock`.
    /// - Throws: `SyscallError` for any failure but `EINTR`, `EAGAIN` and `EWOULDBLOCK`.
    public static func nonBlocking<Result: BinaryInteger>(
        _ name: String, _ call: () -> Result
    ) throws(SyscallError) -> Outcome<Result> {
        while true {
            let result = call()
            if result >= 0 { return .done(result) }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SyscallError(name, errno: code)
            }
        }
    }

    /// Sets `O_NONBLOCK` on `fd`.
    public static func setNonBlocking(_ fd: Int32) throws(SyscallError) {
        let flags = try run("fcntl F_GETFL") { fcntl(fd, F_GETFL) }
        try run("fcntl F_SETFL") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    /// Clears `O_NONBLOCK` on `fd`.
    public static func setBlocking(_ fd: Int32) throws(SyscallError) {
        let flags = try run("fcntl F_GETFL") { fcntl(fd, F_GETFL) }
        try run("fcntl F_SETFL") { fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
    }

    /// Waits up to `timeoutMilliseconds` (-1: no limit) for `events` (`POLLIN`, `POLLOUT`) on `fd`; returns the
    /// events that happened (`revents`, which may add `POLLERR` or `POLLHUP`), or 0 when the time ran out.
    /// A wait interrupted by a signal starts again with the whole timeout.
    public static func poll(_ fd: Int32, for events: Int32, timeoutMilliseconds: Int32) throws(SyscallError) -> Int32 {
        var entry = pollfd(fd: fd, events: Int16(events), revents: 0)
        let ready = try run("poll") { Glibc.poll(&entry, 1, timeoutMilliseconds) }
        return ready == 0 ? 0 : Int32(entry.revents)
    }

    /// Sets `FD_CLOEXEC` on `fd`.
    public static func setCloseOnExec(_ fd: Int32) throws(SyscallError) {
        try run("fcntl F_SETFD") { fcntl(fd, F_SETFD, FD_CLOEXEC) }
    }

    /// Sets an integer socket option (`SO_REUSEADDR`, `TCP_NODELAY`, ...); `name` names it in the error.
    public static func setOption(
        _ fd: Int32, _ level: Int32, _ option: Int32, _ value: Int32, name: String
    ) throws(SyscallError) {
        var value = value
        try run("setsockopt \(name)") { setsockopt(fd, level, option, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }

    /// Sets a socket timeout (`SO_RCVTIMEO`, `SO_SNDTIMEO`) to `seconds`; `name` names it in the error.
    public static func setTimeout(_ fd: Int32, _ option: Int32, seconds: Double, name: String) throws(SyscallError) {
        let whole = seconds.rounded(.down)
        var limit = timeval(tv_sec: Int(whole), tv_usec: Int((seconds - whole) * 1e6))
        try run("setsockopt \(name)") {
            setsockopt(fd, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    /// The pending error of a socket (`SO_ERROR`), which also clears it: 0, or the `errno` of a failed
    /// non-blocking `connect`.
    public static func pendingError(_ fd: Int32) throws(SyscallError) -> Int32 {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        try run("getsockopt SO_ERROR") { getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) }
        return code
    }
}

/// A failed system call: which one, and its `errno`.
public struct SyscallError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The call, as the caller named it (e.g. "accept", "bind 0.0.0.0:443").
    public let operation: String
    public let errno: Int32

    public init(_ operation: String, errno: Int32 = Glibc.errno) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String {
        "\(operation): \(String(cString: strerror(errno)))"
    }
}
