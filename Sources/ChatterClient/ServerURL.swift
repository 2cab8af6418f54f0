#if canImport(Glibc)
    import Glibc
#endif

/// A parsed `--server` URL: `http` or `https`, a host name or IP literal, a port and an optional base path.
public struct ServerURL: Equatable, Sendable, CustomStringConvertible {
    /// What kind of host the URL names; decides SNI and which certificate check applies.
    public enum HostKind: Equatable, Sendable {
        /// A DNS name, a dotted-quad IPv4 address, or a bracketed IPv6 address.
        case name, ipv4, ipv6
    }

    /// True for `https`.
    public var usesTLS: Bool
    /// The host without brackets, e.g. `localhost`, `127.0.0.1` or `::1`; names are lower-cased.
    public var host: String
    /// Name or IP literal.
    public var hostKind: HostKind
    /// The TCP port, explicit or the scheme's default.
    public var port: UInt16
    /// The path before each endpoint, without a trailing slash: `""` or e.g. `/chatter`.
    public var basePath: String

    /// Parses `text`; the error says what is wrong with it.
    public init(parsing text: String) throws(ClientError) {
        let lowered = text.lowercased()
        let rest: Substring
        if lowered.hasPrefix("https://") {
            usesTLS = true
            rest = text.dropFirst(8)
        } else if lowered.hasPrefix("http://") {
            usesTLS = false
            rest = text.dropFirst(7)
        } else {
            throw Self.invalid(text, "it must start with https:// or http://")
        }
        guard !rest.contains(where: { $0 == "?" || $0 == "#" }) else {
            throw Self.invalid(text, "no query or fragment is allowed")
        }
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        guard !path.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value >= 0x7F || $0 == "%" }) else {
            throw Self.invalid(text, "the path may hold only printable ASCII, without % escapes")
        }
        basePath = String(path.reversed().drop { $0 == "/" }.reversed())
        (host, hostKind, port) = try Self.parseAuthority(authority, usesTLS: usesTLS, text: text)
    }

    /// The `Host` header value (RFC 9110 §7.2): brackets around IPv6, the port only when not the default.
    public var hostHeader: String {
        let shown = hostKind == .ipv6 ? "[\(host)]" : host
        return port == (usesTLS ? 443 : 80) ? shown : "\(shown):\(port)"
    }

    /// The request target for `endpoint` (e.g. `getmaps`) under the base path.
    public func path(for endpoint: String) -> String {
        "\(basePath)/\(endpoint)"
    }

    /// The URL in canonical form.
    public var description: String {
        "\(usesTLS ? "https" : "http")://\(hostHeader)\(basePath)/"
    }

    private static func parseAuthority(
        _ authority: Substring, usesTLS: Bool, text: String
    ) throws(ClientError) -> (String, HostKind, UInt16) {
        guard !authority.contains("@") else { throw invalid(text, "user names and passwords are not supported") }
        var hostPart = authority
        var portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid(text, "unclosed [ in the host") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { throw invalid(text, "unexpected text after ]") }
            portPart = after.isEmpty ? nil : after.dropFirst()
            guard isIP(String(hostPart), family: AF_INET6) else { throw invalid(text, "bad IPv6 address") }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        let port =
            try portPart.map { (part) throws(ClientError) -> UInt16 in
                guard part.allSatisfy(\.isASCII), let number = UInt16(part), number > 0 else {
                    throw invalid(text, "the port must be a number from 1 to 65535")
                }
                return number
            } ?? (usesTLS ? 443 : 80)
        let host = String(hostPart).lowercased()
        if authority.hasPrefix("[") { return (host, .ipv6, port) }
        guard !host.isEmpty, host.unicodeScalars.allSatisfy(isHostNameScalar) else {
            throw invalid(text, "bad host name")
        }
        return (host, isIP(host, family: AF_INET) ? .ipv4 : .name, port)
    }

    private static func isHostNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "0"..."9", "-", ".", "_": true
        default: false
        }
    }

    private static func isIP(_ text: String, family: Int32) -> Bool {
        var address = in6_addr()  // large enough for either family
        return inet_pton(family, text, &address) == 1
    }

    private static func invalid(_ text: String, _ why: String) -> ClientError {
        .usage("bad server URL \(text): \(why)")
    }
}
