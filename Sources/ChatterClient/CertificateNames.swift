/// The hosts a certificate speaks for: its subjectAltName entries (RFC 5280 §4.2.1.6) and, for a name-constrained
/// CA, the subtrees its nameConstraints permit, less those it excludes (§4.2.1.10). `chatter` trusts
/// `./chatterd.crt` for these alone.
///
/// The subject's common name is not among them: names belong in subjectAltName, and leaving it out can only make
/// `chatter` trust the file for fewer hosts.
public struct CertificateNames: Equatable, Sendable {
    /// An IP address range from nameConstraints: an address and its mask, of the same length (4 or 16 bytes).
    public struct AddressRange: Equatable, Sendable {
        /// The range's first address, in network order.
        public var address: [UInt8]
        /// Which bits of an address must equal `address`'s.
        public var mask: [UInt8]

        /// The range of addresses that agree with `address` wherever `mask` has a bit set.
        public init(address: [UInt8], mask: [UInt8]) {
            self.address = address
            self.mask = mask
        }

        /// Whether `candidate` is in the range; addresses of the other family never are.
        public func contains(_ candidate: [UInt8]) -> Bool {
            candidate.count == address.count && mask.count == address.count
                && zip(zip(candidate, address), mask).allSatisfy { pair, mask in pair.0 & mask == pair.1 & mask }
        }
    }

    /// subjectAltName dNSName entries, lower-cased; `*.example.org` stands for one label more.
    public var dnsNames: [String] = []
    /// subjectAltName iPAddress entries, 4 or 16 bytes.
    public var addresses: [[UInt8]] = []
    /// Permitted dNSName subtrees, lower-cased: `example.org` covers it and its subdomains, `.example.org` only
    /// its subdomains (as OpenSSL reads them).
    public var permittedDomains: [String] = []
    /// Permitted iPAddress subtrees.
    public var permittedRanges: [AddressRange] = []
    /// Excluded dNSName subtrees, lower-cased: hosts the certificate says it does not speak for.
    public var excludedDomains: [String] = []
    /// Excluded iPAddress subtrees.
    public var excludedRanges: [AddressRange] = []

    /// Names with the given parts.
    public init(
        dnsNames: [String] = [], addresses: [[UInt8]] = [], permittedDomains: [String] = [],
        permittedRanges: [AddressRange] = [], excludedDomains: [String] = [], excludedRanges: [AddressRange] = []
    ) {
        self.dnsNames = dnsNames.map { $0.lowercased() }
        self.addresses = addresses
        self.permittedDomains = permittedDomains.map { $0.lowercased() }
        self.permittedRanges = permittedRanges
        self.excludedDomains = excludedDomains.map { $0.lowercased() }
        self.excludedRanges = excludedRanges
    }

    /// Whether `server`'s host is one of these names and in no excluded subtree: a host name compared without
    /// regard to case, an IP literal compared as an address (so `[0:0::1]` is `::1`).
    public func covers(_ server: ServerURL) -> Bool {
        if let address = server.addressBytes {
            return (addresses.contains(address) || permittedRanges.contains { $0.contains(address) })
                && !excludedRanges.contains { $0.contains(address) }
        }
        let host = server.host.lowercased()
        return (dnsNames.contains { Self.name($0, matches: host) }
            || permittedDomains.contains { Self.domain($0, covers: host) })
            && !excludedDomains.contains { Self.domain($0, covers: host) }
    }

    /// A subjectAltName entry against a host: equal, or a `*.` wildcard standing for exactly one label.
    private static func name(_ name: String, matches host: String) -> Bool {
        guard name.hasPrefix("*.") else { return name == host }
        let parent = name.dropFirst(1)  // ".example.org"
        guard host.hasSuffix(parent) else { return false }
        let label = host.dropLast(parent.count)
        return !label.isEmpty && !label.contains(".")
    }

    /// A subtree against a host. An empty subtree, which OpenSSL reads as "every name", is no name of the
    /// certificate's own, so it covers nothing here (and excludes nothing).
    private static func domain(_ domain: String, covers host: String) -> Bool {
        guard !domain.isEmpty else { return false }
        if domain.hasPrefix(".") { return host.hasSuffix(domain) && host.count > domain.count }
        return host == domain || host.hasSuffix("." + domain)
    }
}
