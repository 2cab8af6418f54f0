/// Which certificates an `https` connection trusts.
///
/// `./chatterd.crt` is the certificate `scripts/run` serves, so it vouches only for that server: `localhost`,
/// `127.0.0.1`, `::1` and the certificate's own names. Trusting it for any host would let whoever wrote that
/// file (a checkout, a download directory) impersonate every site `chatter` is pointed at.
public enum TrustAnchor: Equatable, Sendable {
    /// `--cacert` or `CHATTER_CACERT`: the file's certificates are the only anchors, whatever the host.
    case caFile(String)
    /// `./chatterd.crt`, for the server it belongs to: the only anchor.
    case localCertificate(String)
    /// The system's trusted CAs; `passedOver` is a `./chatterd.crt` that is not for this host.
    case system(passedOver: String?)

    /// The anchor for `server`. `names` reads a certificate file's names (nil when it cannot); it is asked only
    /// when the choice depends on them.
    public static func choose(
        for server: ServerURL, caFile: String?, localCertificate: String?, names: (String) -> CertificateNames?
    ) -> TrustAnchor {
        if let caFile { return .caFile(caFile) }
        guard let localCertificate else { return .system(passedOver: nil) }
        if server.isLocalhost || names(localCertificate)?.covers(server) == true {
            return .localCertificate(localCertificate)
        }
        return .system(passedOver: localCertificate)
    }

    /// The PEM file to trust instead of the system's store, if any.
    var file: String? {
        switch self {
        case .caFile(let path), .localCertificate(let path): path
        case .system: nil
        }
    }

    /// What was trusted, for the error when a server's certificate is not.
    func description(for server: ServerURL) -> String {
        switch self {
        case .caFile(let path), .localCertificate(let path): return "CA file \(path)"
        case .system(nil): return "the system's trusted CAs; use --cacert FILE for others"
        case .system(let skipped?):
            return "the system's trusted CAs: \(skipped) is trusted only for localhost and the names in it, "
                + "not \(server.host); use --cacert \(skipped) to trust it for this server"
        }
    }
}
