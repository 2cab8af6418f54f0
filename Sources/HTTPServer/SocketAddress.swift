#if canImport(Glibc)
import Glibc
#endif

/// Socket addresses as text, for logs.
enum SocketAddress {
    /// `ip:port`, or `[ip]:port` for IPv6; "-" for any other family.
    static func text(_ storage: sockaddr_storage) -> String {
        let family = Int32(storage.ss_family)
        return withUnsafeBytes(of: storage) { raw in
            switch family {
            case AF_INET:
                let address = raw.loadUnaligned(as: sockaddr_in.self)
                let host = withUnsafeBytes(of: address.sin_addr) { numericHost(AF_INET, $0) }
                return "\(host):\(UInt16(bigEndian: address.sin_port))"
            case AF_INET6:
                let address = raw.loadUnaligned(as: sockaddr_in6.self)
                let host = withUnsafeBytes(of: address.sin6_addr) { numericHost(AF_INET6, $0) }
                return "[\(host)]:\(UInt16(bigEndian: address.sin6_port))"
            default:
                return "-"
            }
        }
    }

    private static func numericHost(_ family: Int32, _ address: UnsafeRawBufferPointer) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(family, address.baseAddress, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
