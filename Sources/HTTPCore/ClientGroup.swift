/// The addresses the per-client limits count as one client: an IPv4 address alone, or the IPv6 addresses that
/// share their first `prefixLength` bits. A phone, or an attacker, is given a whole /64 (RFC 4291 §2.5.4, RFC 8273)
/// and may take any address in it (RFC 8981), so counting IPv6 per address would limit nobody.
///
/// IPv4-mapped addresses (`::ffff:a.b.c.d`) are their IPv4 address already (see `IPAddress`), so a client counts
/// the same whichever listener it came through.
public struct ClientGroup: Hashable, Sendable, CustomStringConvertible {
    /// The address's first 64 bits (IPv6) with the bits past the prefix cleared; 0 for IPv4.
    private let high: UInt64
    /// Its last 64 bits likewise (IPv6), or the IPv4 address.
    private let low: UInt64
    /// Bits that count: 32 for IPv4, the prefix length for IPv6.
    public let prefixLength: UInt8
    public let isIPv4: Bool

    /// The prefix lengths an IPv6 group may have: 1 (half of everything) to 128 (one address).
    public static let ipv6PrefixLengths = 1...128

    /// The group of `address`: itself for IPv4, its first `ipv6PrefixLength` bits for IPv6.
    public init(_ address: IPAddress, ipv6PrefixLength: Int) {
        precondition(Self.ipv6PrefixLengths.contains(ipv6PrefixLength), "an IPv6 prefix is 1 to 128 bits")
        let bytes = address.bytes
        isIPv4 = address.isIPv4
        guard !isIPv4 else {
            high = 0
            low = Self.number(bytes[...])
            prefixLength = 32
            return
        }
        high = Self.number(bytes[..<8]) & Self.mask(keeping: min(ipv6PrefixLength, 64))
        low = Self.number(bytes[8...]) & Self.mask(keeping: max(ipv6PrefixLength - 64, 0))
        prefixLength = UInt8(ipv6PrefixLength)
    }

    /// `192.0.2.7`, `2001:db8::/64`, or for a /128 the address alone.
    public var description: String {
        guard !isIPv4 else { return IPAddress(bytes: Self.bytes(of: low, count: 4)).description }
        let network = IPAddress(bytes: Self.bytes(of: high, count: 8) + Self.bytes(of: low, count: 8))
        return prefixLength == 128 ? network.description : "\(network)/\(prefixLength)"
    }

    /// Big-endian `bytes` as one number.
    private static func number(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The last `count` bytes of `value`, big-endian.
    private static func bytes(of value: UInt64, count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * (count - 1 - $0))) }
    }

    /// The high `bits` bits set (0...64); Swift's `>>` gives 0 past the width, so 64 keeps all and 0 none.
    private static func mask(keeping bits: Int) -> UInt64 {
        ~(UInt64.max >> bits)
    }
}
