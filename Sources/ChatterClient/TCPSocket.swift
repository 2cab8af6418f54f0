import Syscalls

#if canImport(Glibc)
    import Glibc
#endif

/// A connected TCP socket, blocking, with send and receive timeouts.
final class TCPSocket: ByteStream {
    /// The file descriptor; closed in `deinit`.
    let fd: Int32
    private let peer: String
    private let timeoutSeconds: Double
    /// What `SO_RCVTIMEO` is set to: `timeoutSeconds` until `setReadTimeout` changes it.
    private var readTimeoutSeconds: Double

    /// Resolves `host` and connects to the first address that answers within `timeoutSeconds`.
    init(connectingTo host: String, port: UInt16, timeoutSeconds: Double) throws(ClientError) {
        peer = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        self.timeoutSeconds = timeoutSeconds
        readTimeoutSeconds = timeoutSeconds
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
            do {
                // MSG_NOSIGNAL: a peer that has gone away gives EPIPE here, not SIGPIPE.
                let count = try Syscall.run("send") {
                    bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
                sent += count
            } catch {
                throw failure(error.errno, doing: "sending to")
            }
        }
    }

    func read(into buffer: inout [UInt8]) throws(ClientError) -> Int {
        do {
            return try Syscall.run("recv") { buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) } }
        } catch {
            throw failure(error.errno, doing: "receiving from")
        }
    }

    func setReadTimeout(seconds: Double) throws(ClientError) {
        do {
            try Syscall.setTimeout(fd, SO_RCVTIMEO, seconds: seconds, name: "SO_RCVTIMEO")
        } catch {
            throw .connection("cannot set the receive timeout: \(error)")
        }
        readTimeoutSeconds = seconds
    }

    /// The error for a failed send or receive; EAGAIN here means SO_RCVTIMEO/SO_SNDTIMEO ran out.
    func failure(_ code: Int32, doing what: String) -> ClientError {
        if code == EAGAIN || code == EWOULDBLOCK {
            let limit = what.hasPrefix("receiving") ? readTimeoutSeconds : timeoutSeconds
            return .connection("timed out \(what) \(peer) (no progress for \(Self.seconds(limit)))")
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
        let fd: Int32
        do {
            let type = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue)
            fd = try Syscall.run("socket") { socket(address.family, type, 0) }
        } catch {
            return .failed(String(cString: strerror(error.errno)))
        }
        do {
            try Syscall.setNonBlocking(fd)
            let started = address.bytes.withUnsafeBytes {
                Glibc.connect(fd, $0.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
            }
            var code = started == 0 ? 0 : errno
            // An interrupted non-blocking connect goes on in the background, like one in progress.
            if code == EINPROGRESS || code == EINTR { code = try waitConnected(fd, timeoutSeconds: timeoutSeconds) }
            guard code == 0 else {
                close(fd)
                return .failed(
                    code == ETIMEDOUT ? "timed out after \(seconds(timeoutSeconds))" : String(cString: strerror(code)))
            }
            // Blocking from here on, with kernel timeouts: OpenSSL then needs no event loop.
            try Syscall.setBlocking(fd)
            try Syscall.setTimeout(fd, SO_RCVTIMEO, seconds: timeoutSeconds, name: "SO_RCVTIMEO")
            try Syscall.setTimeout(fd, SO_SNDTIMEO, seconds: timeoutSeconds, name: "SO_SNDTIMEO")
        } catch {
            close(fd)
            return .failed(error.description)
        }
        return .connected(fd)
    }

    /// Waits for a non-blocking connect to finish; returns its errno (0 on success, ETIMEDOUT on timeout).
    private static func waitConnected(_ fd: Int32, timeoutSeconds: Double) throws(SyscallError) -> Int32 {
        let milliseconds = Int32(min(timeoutSeconds * 1000, Double(Int32.max)))
        guard try Syscall.poll(fd, for: POLLOUT, timeoutMilliseconds: milliseconds) != 0 else { return ETIMEDOUT }
        return try Syscall.pendingError(fd)
    }
}
