/// Well-formed UTF-8 as RFC 3629 §4 defines it: no overlong forms, no surrogates, nothing above U+10FFFF.
enum UTF8Validation {
    /// Whether `bytes` is entirely well-formed UTF-8.
    static func isValid(_ bytes: [UInt8]) -> Bool {
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            guard let (tails, second) = sequenceShape(lead), index + tails < bytes.count,
                second.contains(bytes[index + 1])
            else { return false }
            for offset in stride(from: 2, through: tails, by: 1) where !(0x80...0xBF).contains(bytes[index + offset]) {
                return false
            }
            index += tails + 1
        }
        return true
    }

    /// For a non-ASCII lead byte: how many continuation bytes follow, and the range allowed for the first.
    private static func sequenceShape(_ lead: UInt8) -> (tails: Int, second: ClosedRange<UInt8>)? {
        switch lead {
        case 0xC2...0xDF: (1, 0x80...0xBF)
        case 0xE0: (2, 0xA0...0xBF)  // excludes overlong 3-byte forms
        case 0xE1...0xEC, 0xEE...0xEF: (2, 0x80...0xBF)
        case 0xED: (2, 0x80...0x9F)  // excludes the surrogates U+D800...U+DFFF
        case 0xF0: (3, 0x90...0xBF)  // excludes overlong 4-byte forms
        case 0xF1...0xF3: (3, 0x80...0xBF)
        case 0xF4: (3, 0x80...0x8F)  // excludes anything above U+10FFFF
        default: nil  // continuation bytes, C0, C1 and F5...FF never lead
        }
    }
}
