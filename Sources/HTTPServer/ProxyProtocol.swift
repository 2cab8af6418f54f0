import HTTPCore

/// The PROXY protocol header (versions 1 and 2, as HAProxy's specification defines them) that a TCP proxy
/// sends before anything else, naming the client it forwards. Read only from trusted proxies.
enum ProxyProtocol {
    enum Parse: Equatable {
        /// The bytes so far are the start of a header (or could be): read more.
        case incomplete
        /// No header: the connection starts with the client's own bytes.
        case absent
        /// A malformed header: the connection must close.
        case invalid
        /// A header of `length` bytes; `client` is the source it names (nil for `UNKNOWN` or `LOCAL`).
        case header(length: Int, client: IPAddress?, port: UInt16?)
    }

    /// The longest version 1 header, CRLF included.
    static let maxVersion1Length = 107
    /// Longest version 2 header accepted (its addresses and a few TLVs).
    static let maxVersion2Length = 16 + 216
    static let version1Prefix = Array("PROXY ".utf8)
    static let version2Signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]

    /// What `bytes`, the first bytes of a connection, begin with.
    static func parse(_ bytes: [UInt8]) -> Parse {
        if startsOrIsStart(bytes, of: version1Prefix) {
            return bytes.count < version1Prefix.count ? .incomplete : parseVersion1(bytes)
        }
        if startsOrIsStart(bytes, of: version2Signature) {
            return bytes.count < version2Signature.count ? .incomplete : parseVersion2(bytes)
        }
        return .absent
    }

    /// Whether `bytes` begins with `prefix`, or is a beginning of it.
    private static func startsOrIsStart(_ bytes: [UInt8], of prefix: [UInt8]) -> Bool {
        let count = min(bytes.count, prefix.count)
        return count > 0 && bytes.prefix(count).elementsEqual(prefix.prefix(count))
    }

    /// `PROXY TCP4|TCP6 source destination sourcePort destinationPort\r\n`, or `PROXY UNKNOWN ...\r\n`.
    private static func parseVersion1(_ bytes: [UInt8]) -> Parse {
        let window = bytes.prefix(maxVersion1Length)
        guard let cr = window.firstIndex(where: { $0 == 0x0D || $0 == 0x0A }) else {
            return bytes.count >= maxVersion1Length ? .invalid : .incomplete
        }
        guard bytes[cr] == 0x0D else { return .invalid }  // a bare LF ends no header
        guard cr + 1 < bytes.count else { return .incomplete }
        guard bytes[cr + 1] == 0x0A else { return .invalid }
        let line = String(decoding: bytes[version1Prefix.count..<cr], as: UTF8.self)
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        if fields.first == "UNKNOWN" { return .header(length: cr + 2, client: nil, port: nil) }
        guard fields.count == 5, fields[0] == "TCP4" || fields[0] == "TCP6",
            let source = IPAddress(fields[1]), IPAddress(fields[2]) != nil,
            source.isIPv4 == (fields[0] == "TCP4"),
            let sourcePort = port(fields[3]), port(fields[4]) != nil
        else { return .invalid }
        return .header(length: cr + 2, client: source, port: sourcePort)
    }

    private static func port(_ text: Substring) -> UInt16? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy(\.isASCII), text.first != "0" || text == "0" else {
            return nil
        }
        return UInt16(text)
    }

    /// Signature, version/command, family/transport, length, then the addresses.
    private static func parseVersion2(_ bytes: [UInt8]) -> Parse {
        guard bytes.count >= 16 else { return .incomplete }
        let versionCommand = bytes[12]
        let family = bytes[13]
        let length = Int(bytes[14]) << 8 | Int(bytes[15])
        guard versionCommand >> 4 == 2, 16 + length <= maxVersion2Length else { return .invalid }
        guard bytes.count >= 16 + length else { return .incomplete }
        let total = 16 + length
        switch versionCommand & 0x0F {
        case 0x0: return .header(length: total, client: nil, port: nil)  // LOCAL: the proxy's own connection
        case 0x1: break  // PROXY
        default: return .invalid
        }
        let address = bytes[16..<total]
        switch family >> 4 {
        case 0x1:  // AF_INET: source, destination (4 bytes each), source port, destination port
            guard length >= 12 else { return .invalid }
            let start = address.startIndex
            let port = UInt16(address[start + 8]) << 8 | UInt16(address[start + 9])
            return .header(length: total, client: IPAddress(bytes: Array(address[start..<(start + 4)])), port: port)
        case 0x2:  // AF_INET6: 16 bytes each, then the ports
            guard length >= 36 else { return .invalid }
            let start = address.startIndex
            let port = UInt16(address[start + 32]) << 8 | UInt16(address[start + 33])
            return .header(length: total, client: IPAddress(bytes: Array(address[start..<(start + 16)])), port: port)
        default:
            return .header(length: total, client: nil, port: nil)  // unspecified or a UNIX socket: no address
        }
    }
}
