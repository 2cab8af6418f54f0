import Syscalls
#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking TCP listening socket (IPv4 or IPv6 literal host).
final class ListeningSocket {
    let fd: Int32
    /// The port actually bound (useful when asked for port 0).
    let port: UInt16
    /// TCP_NOTSENT_LOWAT for accepted sockets (see `ServerConfiguration.maxUnsentBytesPerConnection`).
    private let maxUnsentBytes: Int32

    /// Binds and listens; with `reusePort`, other sockets that also set SO_REUSEPORT may bind the same port,
    /// and the kernel spreads new connections across them.
    init(
        host: String, port: UInt16, backlog: Int32, reusePort: Bool = false, maxUnsentBytes: Int
    ) throws(SyscallError) {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var info: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &info) == 0, let first = info else {
            throw SyscallError("getaddrinfo \(host)", errno: EINVAL)
        }
        defer { freeaddrinfo(info) }

        let fd = try Syscall.run("socket") {
            socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do throws(SyscallError) {
            try Syscall.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, name: "SO_REUSEADDR")
            if reusePort { try Syscall.setOption(fd, SOL_SOCKET, SO_REUSEPORT, 1, name: "SO_REUSEPORT") }
            try Syscall.run("bind \(host):\(port)") { bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) }
            try Syscall.run("listen") { listen(fd, backlog) }
            try Syscall.setNonBlocking(fd)
        } catch {
            close(fd)
            throw error
        }
        self.fd = fd
        self.port = Self.boundPort(fd) ?? port
        self.maxUnsentBytes = Int32(clamping: maxUnsentBytes)
    }

    /// Connections waiting in the backlog to be accepted (0 if the kernel will not say).
    var waitingConnections: Int {
        var info = tcp_info()
        var length = socklen_t(MemoryLayout<tcp_info>.size)
        guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return 0 }
        // For a listening socket Linux reports the accept queue's length in this field.
        return Int(info.tcpi_unacked)
    }

    private static func boundPort(_ fd: Int32) -> UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
        default: return nil
        }
    }

    /// Accepts one pending connection: its fd (non-blocking, close-on-exec, TCP_NODELAY, TCP_NOTSENT_LOWAT) and
    /// the peer's address; nil when none is waiting.
    /// - Throws: the `accept` failure (EMFILE and friends); a connection that cannot be set up is closed and
    ///   skipped, since the next one may be fine.
    func accept() throws(SyscallError) -> (fd: Int32, peer: ClientAddress)? {
        while true {
            var peer = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let outcome: Syscall.Outcome<Int32>
            do throws(SyscallError) {
                outcome = try Syscall.nonBlocking("accept") {
                    withUnsafeMutablePointer(to: &peer) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(fd, $0, &length) }
                    }
                }
            } catch where error.errno == ECONNABORTED || error.errno == EPROTO {
                continue  // the client gave up while queued
            }
            guard case .done(let client) = outcome else { return nil }
            do throws(SyscallError) {
                try Syscall.setNonBlocking(client)
                try Syscall.setCloseOnExec(client)
                try Syscall.setOption(client, Int32(IPPROTO_TCP), TCP_NODELAY, 1, name: "TCP_NODELAY")
                try Syscall.setOption(
                    client, Int32(IPPROTO_TCP), TCP_NOTSENT_LOWAT, maxUnsentBytes, name: "TCP_NOTSENT_LOWAT")
            } catch {
                close(client)
                continue
            }
            guard let address = SocketAddress.client(peer) else {
                close(client)  // not IPv4 or IPv6: the listener only binds those
                continue
            }
            return (client, address)
        }
    }
}
