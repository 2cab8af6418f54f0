import HTTPCore
import Syscalls
#if canImport(Glibc)
import Glibc
#endif

/// Reads a trusted proxy's PROXY header from a socket, if the connection starts with one, without touching what
/// follows it (the TLS handshake, or the first request): the bytes are peeked, and only the header's consumed.
enum ProxyHeaderReader {
    enum Outcome: Equatable {
        /// Not all of it has arrived; read again when the socket is readable.
        case incomplete
        /// The connection starts with something else.
        case absent
        /// A header, consumed; `client` is nil for a proxy's own (LOCAL) connection.
        case header(client: IPAddress?, port: UInt16?)
        /// The socket closed or failed, or the header is malformed: close the connection.
        case unusable
    }

    static func read(_ fd: Int32) -> Outcome {
        var peeked = [UInt8](repeating: 0, count: ProxyProtocol.maxVersion2Length)
        let outcome = try? Syscall.nonBlocking("recv") { recv(fd, &peeked, peeked.count, Int32(MSG_PEEK)) }
        guard case .done(let count)? = outcome else { return outcome == .wouldBlock ? .incomplete : .unusable }
        guard count > 0 else { return .unusable }
        switch ProxyProtocol.parse(Array(peeked.prefix(count))) {
        case .incomplete: return .incomplete
        case .invalid: return .unusable
        case .absent: return .absent
        case .header(let length, let client, let port):
            var header = [UInt8](repeating: 0, count: length)
            guard (try? Syscall.run("recv") { recv(fd, &header, length, 0) }) == length else { return .unusable }
            return .header(client: client, port: port)
        }
    }
}
