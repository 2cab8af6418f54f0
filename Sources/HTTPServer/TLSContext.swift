import COpenSSL

#if canImport(Glibc)
import Glibc
#endif

/// The server's OpenSSL context: TLS 1.2–1.3, Mozilla "intermediate" ciphers, ALPN `h2` (preferred) and `http/1.1`.
public final class TLSContext: @unchecked Sendable {  // immutable after init; SSL_CTX is thread-safe for SSL_new
    let context: OpaquePointer

    /// Mozilla intermediate TLS 1.2 suites (guidelines 6.0 dropped DHE); TLS 1.3 uses OpenSSL's defaults.
    static let tls12Ciphers = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    /// Loads and checks the certificate chain and key; the error names the file at fault.
    public init(_ configuration: TLSConfiguration, offeringHTTP2: Bool = true) throws(TLSError) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TLSError("cannot create TLS context") }
        self.context = context
        try Self.requireReadable(configuration.certificatePath, what: "certificate")
        try Self.requirePrivate(configuration.privateKeyPath)
        // Key first: loading a certificate that does not match it drops the key, which the check below reports.
        guard SSL_CTX_use_PrivateKey_file(context, configuration.privateKeyPath, SSL_FILETYPE_PEM) == 1 else {
            throw TLSError("cannot load private key \(configuration.privateKeyPath)")
        }
        guard SSL_CTX_use_certificate_chain_file(context, configuration.certificatePath) == 1 else {
            throw TLSError("cannot load certificate \(configuration.certificatePath)")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw TLSError(
                "private key \(configuration.privateKeyPath) does not match certificate \(configuration.certificatePath)")
        }
        try Self.requireCurrent(SSL_CTX_get0_certificate(context), path: configuration.certificatePath)
        try configureProtocol(offeringHTTP2: offeringHTTP2)
    }

    /// When the certificate expires, in seconds since 1970 (UTC).
    public var notAfter: Double {
        Self.secondsSince1970(X509_get0_notAfter(SSL_CTX_get0_certificate(context))) ?? 0
    }

    /// An ASN.1 time as seconds since 1970, or nil if OpenSSL cannot read it.
    private static func secondsSince1970(_ time: UnsafePointer<ASN1_TIME>?) -> Double? {
        var parts = tm()
        guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Double(timegm(&parts))
    }

    deinit {
        SSL_CTX_free(context)
    }

    private func configureProtocol(offeringHTTP2: Bool) throws(TLSError) {
        guard COpenSSL_SSL_CTX_set_min_proto_version(context, COpenSSL_TLS1_2_VERSION()) == 1,
            COpenSSL_SSL_CTX_set_max_proto_version(context, COpenSSL_TLS1_3_VERSION()) == 1,
            SSL_CTX_set_cipher_list(context, Self.tls12Ciphers) == 1,
            COpenSSL_SSL_CTX_set1_groups_list(context, "X25519:prime256v1:secp384r1") == 1
        else { throw TLSError("cannot configure TLS protocol") }
        _ = SSL_CTX_set_options(context, COpenSSL_server_options())
        // Partial writes let a large response go out as the socket drains; the buffer may move between retries.
        _ = COpenSSL_SSL_CTX_set_mode(
            context, Int(SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS))
        if offeringHTTP2 {
            SSL_CTX_set_alpn_select_cb(context, selectH2OrHTTP11, nil)
        } else {
            SSL_CTX_set_alpn_select_cb(context, selectHTTP11, nil)
        }
    }

    private static func requireReadable(_ path: String, what: String) throws(TLSError) {
        guard access(path, R_OK) == 0 else {
            throw TLSError("cannot read \(what) \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Clients reject a certificate outside its validity period, so starting with one would only fail later.
    private static func requireCurrent(_ certificate: OpaquePointer?, path: String) throws(TLSError) {
        guard let certificate else { throw TLSError("no certificate in \(path)") }
        if X509_cmp_current_time(X509_get0_notAfter(certificate)) <= 0 {
            throw TLSError("certificate \(path) has expired; make a new one with deploy/gen-cert.sh")
        }
        if X509_cmp_current_time(X509_get0_notBefore(certificate)) >= 0 {
            throw TLSError("certificate \(path) is not valid yet")
        }
    }

    /// Like ssh, refuse a private key that others may read.
    private static func requirePrivate(_ path: String) throws(TLSError) {
        try requireReadable(path, what: "private key")
        var info = stat()
        guard stat(path, &info) == 0 else { throw TLSError("cannot stat private key \(path)") }
        guard info.st_mode & 0o077 == 0 else {
            throw TLSError(
                "private key \(path) is accessible by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); "
                    + "run: chmod 600 \(path)")
        }
    }
}

/// ALPN (RFC 7301): `h2` when the client offers it, else `http/1.1`; a client offering neither gets
/// no_application_protocol.
private func selectH2OrHTTP11(
    _ ssl: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
    _ outLength: UnsafeMutablePointer<UInt8>?, _ offered: UnsafePointer<UInt8>?, _ offeredLength: UInt32,
    _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    select([ALPN.h2, ALPN.http11], out, outLength, offered, offeredLength)
}

/// ALPN with HTTP/2 turned off: `http/1.1` only.
private func selectHTTP11(
    _ ssl: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
    _ outLength: UnsafeMutablePointer<UInt8>?, _ offered: UnsafePointer<UInt8>?, _ offeredLength: UInt32,
    _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    select([ALPN.http11], out, outLength, offered, offeredLength)
}

/// Points `out` at the first of `preferred` (in our order of preference) that the client's list offers.
private func select(
    _ preferred: [[UInt8]], _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
    _ outLength: UnsafeMutablePointer<UInt8>?, _ offered: UnsafePointer<UInt8>?, _ offeredLength: UInt32
) -> Int32 {
    guard let offered, let out, let outLength else { return SSL_TLSEXT_ERR_NOACK }
    for name in preferred {
        var index = 0
        while index < Int(offeredLength) {
            let length = Int(offered[index])
            let start = index + 1
            guard start + length <= Int(offeredLength) else { break }
            if length == name.count, (0..<length).allSatisfy({ offered[start + $0] == name[$0] }) {
                out.pointee = offered + start
                outLength.pointee = UInt8(length)
                return SSL_TLSEXT_ERR_OK
            }
            index = start + length
        }
    }
    return SSL_TLSEXT_ERR_ALERT_FATAL
}

/// ALPN protocol names (RFC 7301 §6, RFC 9113 §3.1).
enum ALPN {
    static let h2 = Array("h2".utf8)
    static let http11 = Array("http/1.1".utf8)
}
