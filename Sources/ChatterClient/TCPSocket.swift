#if canImport(Glibc)
    import Glibc
#endif

/// A connected TCP socket, blocking, with send and receive timeouts.
final class TCPSocket: ByteStream {
    /// The file descriptor; closed in `deinit`.
    let fd: Int32
    private let peer: String
    private let timeoutSeconds: Double

    /// Resolves `host` and connects to the first address that answers within `timeoutSeconds`.
    init(connectingTo host: String, port: UInt16, timeoutSeconds: Double) throws(ClientError) {
        peer = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        self.timeoutSeconds = timeoutSeconds
        var failures: [String] = []
        for address in try Self.resolve(host, port: port) {
            switch Self.connect(address, timeoutSeconds: timeoutSeconds) {
            case .connected(let fd):
                self.fd = fd
                return
            case .failed(let why):
                if !failures.contains(why) { failures.append(why) }
            }
        }
        throw .connection("cannot connect to \(peer): \(failures.joined(separator: "; "))")
    }

    deinit {
        close(fd)
    }

    func write(_ bytes: [UInt8]) throws(ClientError) {
        var sent = 0
        while sent < bytes.count {
            // MSG_NOSIGNAL: a peer that has gone away gives EPIPE here, not SIGPIPE.
            let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count >= 0 {
                sent += count
            } else if errno != EINTR {
                throw failure(errno, doing: "sending to")
            }
        }
    }

    func read(into buffer: inout [UInt8]) throws(ClientError) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count >= 0 { return count }
            if errno != EINTR { throw failure(errno, doing: "receiving from") }
        }
    }

    /// The error for a failed send or receive; EAGAIN here means SO_RCVTIMEO/SO_SNDTIMEO ran out.
    func failure(_ code: Int32, doing what: String) -> ClientError {
        if code == EAGAIN || code == EWOULDBLOCK {
            return .connection("timed out \(what) \(peer) (no progress for \(Self.seconds(timeoutSeconds)))")
        }
        return .connection("error \(what) \(peer): \(String(cString: strerror(code)))")
    }

    /// "10 s" rather than "10.0 s".
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && value < 1e9 ? "\(Int(value)) s" : "\(value) s"
    }

    /// A resolved address: its family and its `sockaddr` bytes.
    private struct Address {
        var family: Int32
        var bytes: [UInt8]
    }

    /// How one connection attempt ended.
    private enum Attempt {
        case connected(Int32)
        case failed(String)
    }

    /// The host's TCP addresses, in getaddrinfo's preferred order.
    private static func resolve(_ host: String, port: UInt16) throws(ClientError) -> [Address] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0 else {
            throw .connection("cannot resolve host \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var addresses: [Address] = []
        var next = list
        while let entry = next {
            if let address = entry.pointee.ai_addr {
                let raw = UnsafeRawBufferPointer(start: address, count: Int(entry.pointee.ai_addrlen))
                addresses.append(Address(family: entry.pointee.ai_family, bytes: Array(raw)))
            }
            next = entry.pointee.ai_next
        }
        return addresses
    }

    /// Connects a new socket to one address without blocking past the timeout.
    private static func connect(_ address: Address, timeoutSeconds: Double) -> Attempt {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failed(String(cString: strerror(errno))) }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        let started = address.bytes.withUnsafeBytes {
            Glibc.connect(fd, $0.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
        }
        var code = started == 0 ? 0 : errno
        if code == EINPROGRESS { code = waitConnected(fd, timeoutSeconds: timeoutSeconds) }
        guard code == 0 else {
            close(fd)
            return .failed(
                code == ETIMEDOUT ? "timed out after \(seconds(timeoutSeconds))" : String(cString: strerror(code)))
        }
        // Blocking from here on, with kernel timeouts: OpenSSL then needs no event loop.
        _ = fcntl(fd, F_SETFL, flags)
        let whole = timeoutSeconds.rounded(.down)
        var limit = timeval(tv_sec: Int(whole), tv_usec: Int((timeoutSeconds - whole) * 1e6))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        return .connected(fd)
    }

    /// Waits for a non-blocking connect to finish; returns its errno (0 on success, ETIMEDOUT on timeout).
    private static func waitConnected(_ fd: Int32, timeoutSeconds: Double) -> Int32 {
        var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        var ready: Int32
        repeat {
            ready = poll(&entry, 1, Int32(min(timeoutSeconds * 1000, Double(Int32.max))))
        } while ready < 0 && errno == EINTR
        guard ready > 0 else { return ready == 0 ? ETIMEDOUT : errno }
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) == 0 else { return errno }
        return code
    }
}
