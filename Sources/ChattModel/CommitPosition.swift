/// Where the store stood at a commit (migrations/0005): `epoch` changes with every edit or removal of chatts, and
/// `count` is the commit-order counter, the position of the last chatt committed. Whoever holds every chatt up to
/// `count` of `epoch` can take the store's later commits in order from there; across epochs it must read again.
/// On the wire it is the opaque text `E-N` (`Feed-Position`, a stream's event ids).
public struct CommitPosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var epoch: Int64
    public var count: Int64

    public init(epoch: Int64, count: Int64) {
        self.epoch = epoch
        self.count = count
    }

    /// The epoch a new store starts at.
    public static let firstEpoch: Int64 = 1

    /// The longest run of digits either part may have: 18 always fits in an Int64.
    static let maximumDigits = 18

    /// Parses `E-N`: two runs of 1 to 18 ASCII digits joined by one hyphen, nothing else (no sign, no spaces);
    /// nil for anything else.
    public init?(text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard let hyphen = bytes.firstIndex(of: UInt8(ascii: "-")),
            let epoch = Self.number(bytes[..<hyphen]),
            let count = Self.number(bytes[(hyphen + 1)...])
        else { return nil }
        self.init(epoch: epoch, count: count)
    }

    /// `E-N`.
    public var description: String { "\(epoch)-\(count)" }

    /// By epoch, then by count. Only positions of one epoch say which commit came first.
    public static func < (lhs: CommitPosition, rhs: CommitPosition) -> Bool {
        (lhs.epoch, lhs.count) < (rhs.epoch, rhs.count)
    }

    /// The value of 1 to 18 ASCII digits; nil for anything else.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int64? {
        guard (1...maximumDigits).contains(digits.count) else { return nil }
        var value: Int64 = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + Int64(digit - UInt8(ascii: "0"))
        }
        return value
    }
}
