#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking TCP listening socket (IPv4 or IPv6 literal host).
final class ListeningSocket {
    let fd: Int32
    /// The port actually bound (useful when asked for port 0).
    let port: UInt16

    /// Binds and listens; with `reusePort`, other sockets that also set SO_REUSEPORT may bind the same port,
    /// and the kernel spreads new connections across them.
    init(host: String, port: UInt16, backlog: Int32, reusePort: Bool = false) throws(SocketError) {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var info: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &info) == 0, let first = info else {
            throw SocketError("getaddrinfo \(host)", errno: EINVAL)
        }
        defer { freeaddrinfo(info) }

        let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if reusePort {
            guard setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                let error = SocketError("setsockopt SO_REUSEPORT")
                close(fd)
                throw error
            }
        }
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let error = SocketError("bind \(host):\(port)")
            close(fd)
            throw error
        }
        guard listen(fd, backlog) == 0 else {
            let error = SocketError("listen")
            close(fd)
            throw error
        }
        setNonBlocking(fd)
        self.fd = fd
        self.port = Self.boundPort(fd) ?? port
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

    /// Accepts one pending connection: its fd (non-blocking, TCP_NODELAY) and the client's address as text;
    /// nil when none is waiting.
    func accept() throws(SocketError) -> (fd: Int32, peer: String)? {
        while true {
            var peer = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(fd, $0, &length) }
            }
            if client >= 0 {
                setNonBlocking(client)
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                var on: Int32 = 1
                setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                return (client, SocketAddress.text(peer))
            }
            switch errno {
            case EINTR, ECONNABORTED, EPROTO: continue
            case EAGAIN, EWOULDBLOCK: return nil
            default: throw SocketError("accept")
            }
        }
    }
}

func setNonBlocking(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
}
