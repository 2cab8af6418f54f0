#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address, as the 4 or 16 bytes of the network's byte order. IPv4-mapped IPv6 addresses
/// (`::ffff:a.b.c.d`) are kept as the IPv4 address they stand for, so one client has one address.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    public var isIPv4: Bool { bytes.count == 4 }

    /// The address in `text` (dotted IPv4 or RFC 4291 IPv6, without brackets or port), or nil.
    public init?(_ text: Substring) {
        var storage = [UInt8](repeating: 0, count: 16)
        let string = String(text)
        if inet_pton(AF_INET, string, &storage) == 1 {
            self.init(bytes: Array(storage.prefix(4)))
        } else if inet_pton(AF_INET6, string, &storage) == 1 {
            self.init(bytes: storage)
        } else {
            return nil
        }
    }

    public init?(_ text: String) {
        self.init(text[...])
    }

    /// The address of 4 or 16 raw bytes.
    public init(bytes: [UInt8]) {
        let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
        self.bytes = bytes.count == 16 && bytes.starts(with: mappedPrefix) ? Array(bytes.suffix(4)) : bytes
    }

    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isIPv4 ? AF_INET : AF_INET6
        guard inet_ntop(family, bytes, &text, socklen_t(text.count)) != nil else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A range of addresses: one address, or a CIDR block (`10.0.0.0/8`, `fd00::/8`).
public struct AddressRange: Hashable, Sendable, CustomStringConvertible {
    public let base: IPAddress
    public let prefixLength: Int

    /// Parses `a.b.c.d`, `a.b.c.d/n`, an IPv6 address or `ipv6/n`; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let base = IPAddress(parts[0]) else { return nil }
        let bits = base.bytes.count * 8
        var length = bits
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...bits).contains(given), parts[1].allSatisfy(\.isASCII) else {
                return nil
            }
            length = given
        }
        self.base = base
        prefixLength = length
    }

    public func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == base.bytes.count else { return false }
        var remaining = prefixLength
        for (ours, theirs) in zip(base.bytes, address.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            guard ours & mask == theirs & mask else { return false }
            remaining -= 8
        }
        return true
    }

    public var description: String {
        prefixLength == base.bytes.count * 8 ? base.description : "\(base)/\(prefixLength)"
    }
}
