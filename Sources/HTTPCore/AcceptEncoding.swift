import ASCII

/// The content codings a client accepts, from its `Accept-Encoding` field (RFC 9110 §12.5.3).
public struct AcceptEncoding: Sendable, Equatable {
    /// One listed coding (lower-cased; `x-gzip` already read as `gzip`) with its weight in thousandths.
    public struct Entry: Sendable, Equatable {
        /// The coding's token, lower-cased, or `*`.
        public let coding: String
        /// The qvalue times 1000, 0...1000; 0 means "not acceptable".
        public let quality: Int

        /// An entry for `coding` (lower case) at `quality` thousandths.
        public init(coding: String, quality: Int) {
            self.coding = coding
            self.quality = quality
        }
    }

    /// The well-formed entries, in field order.
    public let entries: [Entry]

    /// Parses every line of the field as one list. Elements that break the grammar
    /// (`codings [ OWS ";" OWS "q=" qvalue ]`) are skipped, so one odd entry cannot make the rest unusable.
    public init(fieldValues: [String]) {
        var entries: [Entry] = []
        for value in fieldValues {
            let bytes = Array(value.utf8)
            ByteClass.forEachListElement(bytes, 0..<bytes.count) { element in
                if let entry = Self.parseElement(bytes, element) { entries.append(entry) }
            }
        }
        self.entries = entries
    }

    /// How much the client wants `coding` (lower case), 0...1000. A listed coding has its own weight, else
    /// `*` gives its weight; `identity` is acceptable (1000) unless the client excluded it, any other coding
    /// is not (0). RFC 9110 §12.5.3. The first listing of a coding counts.
    public func quality(of coding: String) -> Int {
        if let entry = entries.first(where: { $0.coding == coding }) { return entry.quality }
        if let any = entries.first(where: { $0.coding == "*" }) { return any.quality }
        return coding == "identity" ? 1000 : 0
    }

    private static func parseElement(_ bytes: [UInt8], _ range: Range<Int>) -> Entry? {
        var index = range.lowerBound
        while index < range.upperBound, ByteClass.isTokenChar(bytes[index]) { index += 1 }
        guard index > range.lowerBound else { return nil }
        var coding = String(decoding: bytes[range.lowerBound..<index].map(ByteClass.lowercased), as: UTF8.self)
        // RFC 9110 §8.4.1.3: a recipient SHOULD treat "x-gzip" as "gzip".
        if coding == "x-gzip" { coding = "gzip" }
        let rest = ByteClass.trimmingWhitespace(bytes, index..<range.upperBound)
        guard !rest.isEmpty else { return Entry(coding: coding, quality: 1000) }
        guard bytes[rest.lowerBound] == UInt8(ascii: ";") else { return nil }
        let weight = ByteClass.trimmingWhitespace(bytes, (rest.lowerBound + 1)..<rest.upperBound)
        guard weight.count >= 3, ByteClass.lowercased(bytes[weight.lowerBound]) == UInt8(ascii: "q"),
            bytes[weight.lowerBound + 1] == UInt8(ascii: "="),
            let quality = parseQValue(bytes, (weight.lowerBound + 2)..<weight.upperBound)
        else { return nil }
        return Entry(coding: coding, quality: quality)
    }

    /// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )` (RFC 9110 §12.4.2), in thousandths.
    static func parseQValue(_ bytes: [UInt8], _ range: Range<Int>) -> Int? {
        guard let first = range.first else { return nil }
        let whole = bytes[first]
        guard whole == UInt8(ascii: "0") || whole == UInt8(ascii: "1") else { return nil }
        var quality = whole == UInt8(ascii: "1") ? 1000 : 0
        guard range.count > 1 else { return quality }
        guard bytes[first + 1] == UInt8(ascii: "."), range.count <= 5 else { return nil }
        var scale = 100
        for byte in bytes[(first + 2)..<range.upperBound] {
            guard ASCII.isDigit(byte) else { return nil }
            quality += Int(byte - UInt8(ascii: "0")) * scale
            scale /= 10
        }
        return quality <= 1000 ? quality : nil
    }
}
