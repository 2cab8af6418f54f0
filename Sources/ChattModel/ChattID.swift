import ASCII
import JSON

/// A chatt id as 128 bits, parsed from its canonical text form `8-4-4-4-12` hex digits (either case).
public struct ChattID: Hashable, Sendable {
    /// The first 16 hex digits.
    let high: UInt64
    /// The last 16 hex digits.
    let low: UInt64

    /// The text form is 36 bytes: hyphens at 8, 13, 18 and 23, hex digits elsewhere.
    public static let textLength = 36

    /// Parses `text`; nil unless it is a canonical UUID.
    public init?(_ text: Substring) {
        let bytes = Array(text.utf8)
        guard bytes.count == Self.textLength else { return nil }
        self.init(bytes, 0)
    }

    /// Parses the 36 bytes at `bytes[start...]`; nil unless they are a canonical UUID.
    public init?(_ bytes: [UInt8], _ start: Int) {
        self.init(bytes[...], start)
    }

    /// Parses the 36 bytes at `bytes[start...]` (an index of the slice); nil unless they are a canonical UUID.
    public init?(_ bytes: ArraySlice<UInt8>, _ start: Int) {
        guard start >= bytes.startIndex, start + Self.textLength <= bytes.endIndex else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        for offset in 0..<Self.textLength {
            let byte = bytes[start + offset]
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let nibble = ASCII.hexValue(byte).map(UInt64.init) else { return nil }
            if digits < 16 { high = high << 4 | nibble } else { low = low << 4 | nibble }
            digits += 1
        }
        self.high = high
        self.low = low
    }
}

extension ChattID: CustomStringConvertible {
    /// The canonical text form, in lower case (as the server sends ids).
    public var description: String {
        let digits = String(high, radix: 16).leftPadded(to: 16) + String(low, radix: 16).leftPadded(to: 16)
        var text = ""
        for (offset, digit) in digits.enumerated() {
            if offset == 8 || offset == 12 || offset == 16 || offset == 20 { text.append("-") }
            text.append(digit)
        }
        return text
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
