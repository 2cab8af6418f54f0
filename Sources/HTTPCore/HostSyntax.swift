import ASCII

/// Validates `uri-host [ ":" port ]` (RFC 9110 §7.2, RFC 3986 §3.2.2–3.2.3), the value of Host and the
/// authority of an absolute-form target. Userinfo (`@`) is never accepted (RFC 9110 §4.2.4).
enum HostSyntax {
    /// Whether `bytes[range]` is a non-empty host (reg-name, IPv4 or `[IP-literal]`) with an optional port.
    static func isValid(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        guard !range.isEmpty else { return false }
        let hostEnd: Int
        if bytes[range.lowerBound] == UInt8(ascii: "[") {
            guard let close = bytes[range].firstIndex(of: UInt8(ascii: "]")),
                isIPLiteral(bytes, range.lowerBound + 1..<close)
            else { return false }
            hostEnd = close + 1
        } else {
            hostEnd = bytes[range].firstIndex(of: UInt8(ascii: ":")) ?? range.upperBound
            // IPv4address is a subset of reg-name, so one check covers both.
            guard hostEnd > range.lowerBound, isRegName(bytes, range.lowerBound..<hostEnd) else { return false }
        }
        guard hostEnd < range.upperBound else { return true }
        // port = *DIGIT (RFC 3986 §3.2.3), so `host:` is valid.
        guard bytes[hostEnd] == UInt8(ascii: ":") else { return false }
        return bytes[(hostEnd + 1)..<range.upperBound].allSatisfy(ASCII.isDigit)
    }

    /// reg-name = *( unreserved / pct-encoded / sub-delims ).
    private static func isRegName(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        var index = range.lowerBound
        while index < range.upperBound {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < range.upperBound, ASCII.hexValue(bytes[index + 1]) != nil,
                    ASCII.hexValue(bytes[index + 2]) != nil
                else { return false }
                index += 3
            } else {
                guard ByteClass.isUnreservedOrSubDelim(bytes[index]) else { return false }
                index += 1
            }
        }
        return true
    }

    /// IP-literal contents: IPv6address or IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ).
    private static func isIPLiteral(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        guard let first = range.first else { return false }
        guard ByteClass.lowercased(bytes[first]) == UInt8(ascii: "v") else { return isIPv6(bytes, range) }
        var index = first + 1
        while index < range.upperBound, ASCII.hexValue(bytes[index]) != nil { index += 1 }
        guard index > first + 1, index < range.upperBound, bytes[index] == UInt8(ascii: ".") else { return false }
        let rest = (index + 1)..<range.upperBound
        return !rest.isEmpty
            && bytes[rest].allSatisfy { ByteClass.isUnreservedOrSubDelim($0) || $0 == UInt8(ascii: ":") }
    }

    /// IPv6address: up to 8 groups of 1–4 hex digits, one optional `::`, an optional IPv4 tail worth 2 groups.
    private static func isIPv6(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        let colon = UInt8(ascii: ":")
        var index = range.lowerBound
        var groups = 0
        var compressed = false
        if range.count >= 2, bytes[index] == colon, bytes[index + 1] == colon {
            compressed = true
            index += 2
        }
        while index < range.upperBound {
            let groupStart = index
            while index < range.upperBound, ASCII.hexValue(bytes[index]) != nil { index += 1 }
            if index < range.upperBound, bytes[index] == UInt8(ascii: ".") {
                guard isIPv4(bytes, groupStart..<range.upperBound) else { return false }
                groups += 2
                break
            }
            guard (1...4).contains(index - groupStart) else { return false }
            groups += 1
            if index == range.upperBound { break }
            guard bytes[index] == colon, index + 1 < range.upperBound else { return false }
            index += 1
            if bytes[index] == colon {
                guard !compressed else { return false }
                compressed = true
                index += 1
            }
        }
        return compressed ? groups <= 7 : groups == 8
    }

    /// IPv4address = dec-octet "." dec-octet "." dec-octet "." dec-octet, without leading zeros.
    private static func isIPv4(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        let parts = bytes[range].split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        return parts.allSatisfy { part in
            guard (1...3).contains(part.count), part.allSatisfy(ASCII.isDigit) else { return false }
            guard part.count == 1 || part.first != UInt8(ascii: "0") else { return false }
            return part.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } <= 255
        }
    }
}
