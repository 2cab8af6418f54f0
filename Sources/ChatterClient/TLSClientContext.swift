import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// The client's OpenSSL context: TLS 1.2 or 1.3, and peer verification against the chosen trust anchors.
final class TLSClientContext {
    /// The `SSL_CTX`; freed in `deinit`.
    let context: OpaquePointer
    /// How the trust anchors were chosen, for error messages.
    let trustDescription: String

    /// Trusts `anchor` for connections to `server`: a PEM file's certificates, or the system's store.
    init(trusting anchor: TrustAnchor, for server: ServerURL) throws(ClientError) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw .tls("cannot create a TLS context") }
        self.context = context
        trustDescription = anchor.description(for: server)
        guard COpenSSL_SSL_CTX_set_min_proto_version(context, COpenSSL_TLS1_2_VERSION()) == 1 else {
            throw .tls("cannot configure TLS (\(OpenSSLErrorQueue.drain()))")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        guard let caFile = anchor.file else {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw .tls("cannot load the system's trusted CAs (\(OpenSSLErrorQueue.drain()))")
            }
            return
        }
        guard access(caFile, R_OK) == 0 else {
            throw .tls("cannot read CA file \(caFile): \(String(cString: strerror(errno)))")
        }
        guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
            throw .tls("no PEM certificate in CA file \(caFile) (\(OpenSSLErrorQueue.drain()))")
        }
        // The user named these certificates, or they are the scripts/run server's own, so any of them may
        // anchor trust, even a server's own leaf certificate that is not a self-signed CA.
        _ = X509_VERIFY_PARAM_set_flags(SSL_CTX_get0_param(context), UInt(X509_V_FLAG_PARTIAL_CHAIN))
    }

    deinit {
        SSL_CTX_free(context)
    }
}
