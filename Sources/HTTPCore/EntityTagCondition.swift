/// The value of an `If-None-Match` (or `If-Match`) field: `"*" / #entity-tag` (RFC 9110 §13.1.1–§13.1.2).
public enum EntityTagCondition: Sendable, Equatable {
    /// `*`: any current representation.
    case any
    /// A list of tags; may be empty (`#` allows zero elements).
    case tags([EntityTag])

    /// Parses every line of the field, in order, as one comma-separated list (RFC 9110 §5.3).
    /// Nil when no line was sent, or when the value does not follow the grammar: RFC 9110 §13.1.2 leaves a
    /// malformed precondition to the server, and ignoring it (a full 200) is the answer that cannot mislead.
    public init?(fieldValues: [String]) {
        guard !fieldValues.isEmpty else { return nil }
        let bytes = Array(fieldValues.joined(separator: ",").utf8)
        let trimmed = ByteClass.trimmingWhitespace(bytes, 0..<bytes.count)
        if trimmed.count == 1, bytes[trimmed.lowerBound] == UInt8(ascii: "*") {
            self = .any
            return
        }
        guard let tags = Self.parseList(bytes) else { return nil }
        self = .tags(tags)
    }

    /// Whether `tag`, the tag of the selected representation, satisfies this condition by the weak
    /// comparison that `If-None-Match` requires (RFC 9110 §13.1.2): then a GET or HEAD gets 304.
    public func matches(_ tag: EntityTag) -> Bool {
        switch self {
        case .any: true
        case .tags(let tags): tags.contains { $0.weaklyMatches(tag) }
        }
    }

    /// `#entity-tag`: tags separated by commas and optional whitespace; empty elements are ignored, as
    /// RFC 9110 §5.6.1.2 asks of recipients. A comma may appear inside a tag, so this is not a plain split.
    private static func parseList(_ bytes: [UInt8]) -> [EntityTag]? {
        var tags: [EntityTag] = []
        var index = 0
        while true {
            while index < bytes.count, bytes[index] == UInt8(ascii: ",") || ByteClass.isWhitespace(bytes[index]) {
                index += 1
            }
            guard index < bytes.count else { return tags }
            guard let tag = EntityTag.parse(bytes, at: &index) else { return nil }
            tags.append(tag)
            while index < bytes.count, ByteClass.isWhitespace(bytes[index]) { index += 1 }
            guard index == bytes.count || bytes[index] == UInt8(ascii: ",") else { return nil }
        }
    }
}
