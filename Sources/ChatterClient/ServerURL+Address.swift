#if canImport(Glibc)
    import Glibc
#endif

extension ServerURL {
    /// The host's address in network order (4 or 16 bytes) when it is an IP literal; nil for a name.
    public var addressBytes: [UInt8]? {
        switch hostKind {
        case .name: return nil
        case .ipv4: return Self.address(host, family: AF_INET, length: 4)
        case .ipv6: return Self.address(host, family: AF_INET6, length: 16)
        }
    }

    /// Whether the host is `localhost`, `127.0.0.1` or `::1`: this machine, as `scripts/run` serves it.
    public var isLocalhost: Bool {
        switch hostKind {
        case .name: host == "localhost"
        case .ipv4: addressBytes == [127, 0, 0, 1]
        case .ipv6: addressBytes == Array(repeating: 0, count: 15) + [1]
        }
    }

    private static func address(_ text: String, family: Int32, length: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: 16)
        guard inet_pton(family, text, &bytes) == 1 else { return nil }
        return Array(bytes.prefix(length))
    }
}
