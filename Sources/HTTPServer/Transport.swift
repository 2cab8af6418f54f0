#if canImport(Glibc)
import Glibc
#endif

/// The outcome of one non-blocking transport call.
enum IOResult: Equatable {
    /// This many bytes were read or written (never 0).
    case done(Int)
    /// Try again when the socket is readable.
    case wantRead
    /// Try again when the socket is writable.
    case wantWrite
    /// The peer closed its side.
    case closed
    /// A fatal error; the connection must close.
    case failed
}

/// Moves bytes over one connection's socket: plain TCP or TLS. Used only on that connection's queue.
protocol Transport: AnyObject {
    /// Completes the handshake, if the transport has one.
    func handshake() -> IOResult
    func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult
    /// Makes one write from the front of `output`, as suits the transport, and drops what it wrote.
    func write(from output: inout OutputBuffer) -> IOResult
    /// True when input is buffered inside the transport, where the socket's read source cannot see it.
    var hasBufferedInput: Bool { get }
    /// Whether the handshake chose HTTP/2 (ALPN `h2`). Plain TCP has no negotiation.
    var negotiatedHTTP2: Bool { get }
    /// Ends the session politely (TLS close_notify), without waiting for the peer.
    func shutdown()
}

/// Plain TCP.
final class PlainTransport: Transport {
    private let fd: Int32

    init(fd: Int32) {
        self.fd = fd
    }

    var hasBufferedInput: Bool { false }
    var negotiatedHTTP2: Bool { false }

    func handshake() -> IOResult { .done(0) }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        while true {
            let n = recv(fd, buffer.baseAddress, buffer.count, 0)
            if n > 0 { return .done(n) }
            if n == 0 { return .closed }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wantRead
            default: return .failed
            }
        }
    }

    /// Up to `OutputBuffer.maxVectors` pieces in one `sendmsg`, without gathering them first.
    func write(from output: inout OutputBuffer) -> IOResult {
        output.writeVectored { vectors in
            var message = msghdr()
            message.msg_iov = UnsafeMutablePointer(mutating: vectors.baseAddress)
            message.msg_iovlen = vectors.count
            while true {
                // MSG_NOSIGNAL: a peer that reset must not raise SIGPIPE.
                let n = sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
                if n > 0 { return .done(n) }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return .wantWrite
                default: return .failed
                }
            }
        }
    }

    func shutdown() {}
}
