import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// TLS over a connected socket: SNI, ALPN `http/1.1`, and the certificate checked for the URL's host.
final class TLSStream: ByteStream {
    private let session: OpaquePointer
    /// Kept so the descriptor stays open as long as the session uses it.
    private let socket: TCPSocket

    /// Runs the handshake; the error says why the server was not trusted when that is the cause.
    init(over socket: TCPSocket, context: TLSClientContext, server: ServerURL) throws(ClientError) {
        ERR_clear_error()
        guard let session = SSL_new(context.context) else { throw .tls("cannot create a TLS session") }
        self.session = session
        self.socket = socket
        guard SSL_set_fd(session, socket.fd) == 1, Self.expectPeer(session, server) else {
            throw .tls("cannot set up the TLS session (\(OpenSSLErrorQueue.drain()))")
        }
        ERR_clear_error()
        let result = SSL_connect(session)
        guard result == 1 else { throw handshakeFailure(result, context: context, server: server) }
        try requireHTTP11()
    }

    deinit {
        SSL_free(session)
    }

    func write(_ bytes: [UInt8]) throws(ClientError) {
        var sent = 0
        while sent < bytes.count {
            ERR_clear_error()
            let count = bytes[sent...].withUnsafeBytes { SSL_write(session, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { throw ioFailure(count, doing: "sending to") }
            sent += Int(count)
        }
    }

    func read(into buffer: inout [UInt8]) throws(ClientError) -> Int {
        ERR_clear_error()
        let count = buffer.withUnsafeMutableBytes { SSL_read(session, $0.baseAddress, Int32($0.count)) }
        if count > 0 { return Int(count) }
        let code = SSL_get_error(session, count)
        // A close without close_notify reads as end of stream; HTTP framing (Content-Length, chunked) still
        // catches a body cut short.
        if code == SSL_ERROR_ZERO_RETURN || isUnexpectedEOF(code) {
            _ = OpenSSLErrorQueue.drain()
            return 0
        }
        throw ioFailure(count, doing: "receiving from")
    }

    func setReadTimeout(seconds: Double) throws(ClientError) {
        try socket.setReadTimeout(seconds: seconds)
    }

    /// SNI and the name or address the certificate must match (RFC 6125), set before the handshake.
    private static func expectPeer(_ session: OpaquePointer, _ server: ServerURL) -> Bool {
        switch server.hostKind {
        case .name:
            return COpenSSL_SSL_set_tlsext_host_name(session, server.host) == 1
                && SSL_set1_host(session, server.host) == 1
                && setALPN(session)
        case .ipv4, .ipv6:
            // RFC 6066 §3 forbids IP literals in SNI.
            return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(session), server.host) == 1 && setALPN(session)
        }
    }

    /// Offers ALPN `http/1.1` (RFC 7301); SSL_set_alpn_protos returns 0 on success.
    private static func setALPN(_ session: OpaquePointer) -> Bool {
        let protocols: [UInt8] = [8] + Array("http/1.1".utf8)
        return SSL_set_alpn_protos(session, protocols, UInt32(protocols.count)) == 0
    }

    /// A server that picks another application protocol would not understand HTTP/1.1.
    private func requireHTTP11() throws(ClientError) {
        var selected: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(session, &selected, &length)
        guard let selected, length > 0 else { return }
        let name = String(decoding: UnsafeBufferPointer(start: selected, count: Int(length)), as: UTF8.self)
        guard name == "http/1.1" else { throw .tls("the server chose ALPN protocol \(name), not http/1.1") }
    }

    /// Names why the handshake failed: untrusted certificate, timeout, a peer not speaking TLS, or OpenSSL's text.
    private func handshakeFailure(_ result: Int32, context: TLSClientContext, server: ServerURL) -> ClientError {
        let verify = SSL_get_verify_result(session)
        if verify != X509_V_OK {
            _ = OpenSSLErrorQueue.drain()
            let why = String(cString: X509_verify_cert_error_string(verify))
            let trusted = "trusting \(context.trustDescription)"
            return .tls("the server's certificate is not trusted for \(server.host): \(why) (\(trusted))")
        }
        let code = SSL_get_error(session, result)
        if code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE {
            return socket.failure(EAGAIN, doing: "in the TLS handshake with")
        }
        let details = OpenSSLErrorQueue.drain()
        if details.contains("wrong version number") || details.contains("packet length too long") {
            return .tls("handshake failed: the server did not answer in TLS (plain HTTP? try an http:// URL)")
        }
        if code == SSL_ERROR_SYSCALL && details.isEmpty {
            return .tls("the server closed the connection during the TLS handshake")
        }
        return .tls("handshake failed (\(details.isEmpty ? "no detail from OpenSSL" : details))")
    }

    private func ioFailure(_ result: Int32, doing what: String) -> ClientError {
        let code = SSL_get_error(session, result)
        // On a blocking socket, WANT_READ/WANT_WRITE means SO_RCVTIMEO or SO_SNDTIMEO ran out.
        if code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE { return socket.failure(EAGAIN, doing: what) }
        let saved = errno
        let details = OpenSSLErrorQueue.drain()
        if code == SSL_ERROR_SYSCALL && details.isEmpty && saved != 0 { return socket.failure(saved, doing: what) }
        return .tls("TLS error \(what) the server (\(details.isEmpty ? "code \(code)" : details))")
    }

    /// OpenSSL 3 reports a close without close_notify as an SSL error with this reason.
    private func isUnexpectedEOF(_ code: Int32) -> Bool {
        code == SSL_ERROR_SSL && ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING
    }
}
