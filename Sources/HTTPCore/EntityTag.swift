/// An entity tag (RFC 9110 §8.8.3): an opaque quoted string naming one representation, strong or weak.
public struct EntityTag: Sendable, Equatable {
    /// The bytes between the quotes, `etagc` only: `%x21 / %x23-7E / obs-text`.
    public let opaque: String
    /// Weak tags (`W/"..."`) promise only semantic equivalence, not identical bytes.
    public let isWeak: Bool

    /// A tag with the given opaque part; nil when `opaque` holds a byte `etagc` does not allow (a quote,
    /// a space or a control character), since the tag could not be written in a header.
    public init?(_ opaque: String, weak: Bool = false) {
        guard opaque.utf8.allSatisfy(Self.isEntityTagChar) else { return nil }
        self.opaque = opaque
        self.isWeak = weak
    }

    /// The field-value form: `"opaque"`, or `W/"opaque"` when weak.
    public var fieldValue: String {
        (isWeak ? "W/\"" : "\"") + opaque + "\""
    }

    /// The weak comparison of RFC 9110 §8.8.3.2, the one `If-None-Match` uses: the opaque parts are equal,
    /// whether or not either tag is weak.
    public func weaklyMatches(_ other: EntityTag) -> Bool {
        opaque == other.opaque
    }

    /// `etagc = %x21 / %x23-7E / obs-text`: any visible byte but `"`, or any byte from 0x80.
    static func isEntityTagChar(_ byte: UInt8) -> Bool {
        byte == 0x21 || (byte >= 0x23 && byte != 0x7F)
    }

    /// Parses `entity-tag = [ weak ] opaque-tag` starting at `bytes[index]`; on success `index` is just past
    /// the closing quote. `weak = %s"W/"` is case-sensitive.
    static func parse(_ bytes: [UInt8], at index: inout Int) -> EntityTag? {
        var cursor = index
        var weak = false
        if cursor + 1 < bytes.count, bytes[cursor] == UInt8(ascii: "W"), bytes[cursor + 1] == UInt8(ascii: "/") {
            weak = true
            cursor += 2
        }
        guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: "\"") else { return nil }
        let opaqueStart = cursor + 1
        cursor = opaqueStart
        while cursor < bytes.count, isEntityTagChar(bytes[cursor]) { cursor += 1 }
        guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: "\"") else { return nil }
        let tag = EntityTag(uncheckedOpaque: String(decoding: bytes[opaqueStart..<cursor], as: UTF8.self), weak: weak)
        index = cursor + 1
        return tag
    }

    private init(uncheckedOpaque: String, weak: Bool) {
        self.opaque = uncheckedOpaque
        self.isWeak = weak
    }
}
