import COpenSSL

#if canImport(Glibc)
import Glibc
#endif

/// One TLS session over a non-blocking socket. Used only on its connection's queue.
final class TLSTransport: Transport {
    private let ssl: OpaquePointer

    init?(context: TLSContext, fd: Int32) {
        guard let ssl = SSL_new(context.context) else { return nil }
        self.ssl = ssl
        SSL_set_fd(ssl, fd)
        SSL_set_accept_state(ssl)
        // Read whatever the socket holds in one system call, instead of a record's header and then its body.
        SSL_set_read_ahead(ssl, 1)
    }

    deinit {
        SSL_free(ssl)
    }

    /// Decrypted bytes, or (with read-ahead) records read from the socket and not yet decrypted.
    var hasBufferedInput: Bool { SSL_has_pending(ssl) != 0 }

    var negotiatedHTTP2: Bool {
        var name: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &name, &length)
        guard let name, Int(length) == ALPN.h2.count else { return false }
        return (0..<Int(length)).allSatisfy { name[$0] == ALPN.h2[$0] }
    }

    func handshake() -> IOResult {
        // The error queue is per thread and Dispatch shares threads between connections: clear it first.
        ERR_clear_error()
        return result(of: SSL_do_handshake(ssl))
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        ERR_clear_error()
        return result(of: SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count)))
    }

    /// Small pieces gathered into one record (see `OutputBuffer.writeGathered`), a large body as it is.
    func write(from output: inout OutputBuffer) -> IOResult {
        output.writeGathered { bytes in
            ERR_clear_error()
            return result(of: SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count)))
        }
    }

    func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    private func result(of returned: Int32) -> IOResult {
        if returned > 0 { return .done(Int(returned)) }
        let code = SSL_get_error(ssl, returned)
        switch code {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: return .closed
        case SSL_ERROR_SYSCALL where returned == 0 && ERR_peek_error() == 0: return .closed
        default:
            // Drain so that a stale error never reaches the next connection on this thread.
            ERR_clear_error()
            return returned == 0 && code != SSL_ERROR_SSL ? .closed : .failed
        }
    }
}
