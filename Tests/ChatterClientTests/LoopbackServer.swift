import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// A one-connection TCP server on 127.0.0.1 for transport tests: it reads the request head, then sends
/// `answer` in the given pieces and closes (or, with `accepting: false`, never accepts at all).
final class LoopbackServer: @unchecked Sendable {  // `received` is written on the server thread before `done` signals
    let port: UInt16
    private let fd: Int32
    private let done = DispatchSemaphore(value: 0)
    private var received: [UInt8] = []

    init(answer pieces: [[UInt8]], accepting: Bool = true) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        port = UInt16(bigEndian: address.sin_port)
        guard bound else { throw LoopbackError() }
        guard accepting else { return }
        DispatchQueue.global().async { self.serve(pieces) }
    }

    deinit {
        close(fd)
    }

    /// The request bytes the server read (waits for the exchange to end).
    func request() -> String {
        done.wait()
        return String(decoding: received, as: UTF8.self)
    }

    private func serve(_ pieces: [[UInt8]]) {
        defer { done.signal() }
        let client = accept(fd, nil, nil)
        guard client >= 0 else { return }
        defer { close(client) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.reversed().starts(with: Array("\n\r\n\r".utf8)) {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            received += buffer[..<count]
        }
        for piece in pieces {
            _ = piece.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }
}

struct LoopbackError: Error {}

/// A port on 127.0.0.1 that nothing listens on (it was free a moment ago).
func closedPort() throws -> UInt16 {
    let server = try LoopbackServer(answer: [], accepting: false)
    return server.port
}
