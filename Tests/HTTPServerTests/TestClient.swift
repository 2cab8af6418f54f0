import COpenSSL
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking loopback client, plain or TLS, with a 5 s receive timeout so a test never hangs.
final class TestClient {
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    struct Failure: Error {
        let what: String
    }

    private let fd: Int32
    private var context: OpaquePointer?
    private var ssl: OpaquePointer?
    private var buffer: [UInt8] = []
    /// The protocol ALPN selected, if any.
    private(set) var alpn: String?
    /// The subject of the certificate the server presented, as OpenSSL prints it (e.g. `/CN=localhost`).
    private(set) var peerSubject: String?

    /// Connects; with `tlsVersion` (e.g. TLS1_2_VERSION) it also completes a handshake pinned to that version.
    init(port: UInt16, tlsVersion: Int32? = nil, alpn: [String] = ["http/1.1"], receiveTimeout: Int = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw Failure(what: "connect")
        }
        if let tlsVersion { try handshake(version: tlsVersion, alpn: alpn) }
    }

    deinit {
        if let ssl { SSL_free(ssl) }
        if let context { SSL_CTX_free(context) }
        Glibc.close(fd)
    }

    private func handshake(version: Int32, alpn offered: [String]) throws {
        context = SSL_CTX_new(TLS_client_method())
        // Security level 0 lets this client offer TLS 1.1, to prove the server refuses it.
        SSL_CTX_set_security_level(context, 0)
        _ = SSL_CTX_set_cipher_list(context, "DEFAULT:@SECLEVEL=0")
        _ = COpenSSL_SSL_CTX_set_min_proto_version(context, version)
        _ = COpenSSL_SSL_CTX_set_max_proto_version(context, version)
        let wire = offered.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
        _ = SSL_CTX_set_alpn_protos(context, wire, UInt32(wire.count))
        ssl = SSL_new(context)
        SSL_set_fd(ssl, fd)
        guard SSL_connect(ssl) == 1 else {
            ERR_clear_error()
            throw Failure(what: "handshake")
        }
        var selected: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &selected, &length)
        if let selected, length > 0 {
            self.alpn = String(decoding: UnsafeBufferPointer(start: selected, count: Int(length)), as: UTF8.self)
        }
        if let certificate = SSL_get1_peer_certificate(ssl) {
            defer { X509_free(certificate) }
            var name = [CChar](repeating: 0, count: 256)
            X509_NAME_oneline(X509_get_subject_name(certificate), &name, Int32(name.count))
            peerSubject = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    func send(_ text: String) {
        send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n: Int
                if let ssl {
                    n = Int(SSL_write(ssl, raw.baseAddress! + offset, Int32(raw.count - offset)))
                } else {
                    n = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                }
                if n <= 0 { return }
                offset += n
            }
        }
    }

    private enum ReadOutcome { case bytes, endOfStream, timedOut }

    /// Reads more bytes into the buffer.
    private func read() -> ReadOutcome {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let n: Int
        var timedOut: Bool
        if let ssl {
            n = Int(SSL_read(ssl, &chunk, Int32(chunk.count)))
            timedOut = n <= 0 && SSL_get_error(ssl, Int32(n)) == SSL_ERROR_SYSCALL && errno == EAGAIN
            if n <= 0 { ERR_clear_error() }
        } else {
            n = recv(fd, &chunk, chunk.count, 0)
            timedOut = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
        }
        guard n > 0 else { return timedOut ? .timedOut : .endOfStream }
        buffer.append(contentsOf: chunk[..<n])
        return .bytes
    }

    private func fill() -> Bool { read() == .bytes }

    /// Reads one response (body framed by Content-Length; `bodyless` for HEAD). Nil if the connection ended first.
    func readResponse(bodyless: Bool = false) -> Response? {
        let terminator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while true {
            if let end = findTerminator(terminator) {
                headEnd = end
                break
            }
            guard fill() else { return nil }
        }
        guard let headEnd else { return nil }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        let headers = head.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var response = Response(status: status, headers: headers, body: [])
        let length = bodyless || status < 200 ? 0 : Int(response.header("Content-Length") ?? "0") ?? 0
        let bodyStart = headEnd + 4
        while buffer.count < bodyStart + length {
            guard fill() else { return nil }
        }
        response.body = Array(buffer[bodyStart..<(bodyStart + length)])
        buffer.removeFirst(bodyStart + length)
        return response
    }

    /// Whether anything (a response, or the end of the connection) arrives within `seconds`, over plain TCP: for
    /// asserting that nothing does while the server must hold back, however slow the machine.
    func hasResponse(within seconds: Double) -> Bool {
        guard buffer.isEmpty else { return true }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, Int32(seconds * 1000)) > 0
    }

    /// True when the server has closed the connection (end of stream, or a reset, before any further byte).
    func isClosedByServer() -> Bool {
        buffer.isEmpty && read() == .endOfStream
    }

    private func findTerminator(_ terminator: [UInt8]) -> Int? {
        guard buffer.count >= terminator.count else { return nil }
        for index in 0...(buffer.count - terminator.count) where buffer[index..<(index + 4)].elementsEqual(terminator) {
            return index
        }
        return nil
    }
}
