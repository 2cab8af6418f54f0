import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// Socket addresses as client addresses.
enum SocketAddress {
    /// The address and port in `storage`; nil for a family other than IPv4 and IPv6.
    static func client(_ storage: sockaddr_storage) -> ClientAddress? {
        let family = Int32(storage.ss_family)
        return withUnsafeBytes(of: storage) { raw in
            switch family {
            case AF_INET:
                let address = raw.loadUnaligned(as: sockaddr_in.self)
                let bytes = withUnsafeBytes(of: address.sin_addr) { Array($0) }
                return ClientAddress(ip: IPAddress(bytes: bytes), port: UInt16(bigEndian: address.sin_port))
            case AF_INET6:
                let address = raw.loadUnaligned(as: sockaddr_in6.self)
                let bytes = withUnsafeBytes(of: address.sin6_addr) { Array($0) }
                return ClientAddress(ip: IPAddress(bytes: bytes), port: UInt16(bigEndian: address.sin6_port))
            default:
                return nil
            }
        }
    }
}
