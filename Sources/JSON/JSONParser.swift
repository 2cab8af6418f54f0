/// A strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// Stricter than the RFC's "SHOULD"s: duplicate keys, lone surrogates, numbers no `Double` holds as written
/// (overflowing to infinity, or nonzero and underflowing to zero) and nesting beyond `maxDepth` are errors.
/// Recursion is bounded by `maxDepth`, so deep input cannot exhaust the stack.
public struct JSONParser {
    /// The deepest nesting of arrays and objects accepted; a top-level `[]` is depth 1.
    public static let maxDepth = 64

    /// The whole input.
    let bytes: [UInt8]
    /// The next byte to read.
    var index: Int

    private init(bytes: [UInt8], index: Int) {
        self.bytes = bytes
        self.index = index
    }

    /// Parses `bytes` as exactly one JSON text, optionally preceded by a UTF-8 byte order mark.
    ///
    /// - Throws: `.invalidUTF8` before any grammar error, so a caller can tell bad encoding from bad JSON.
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        guard UTF8Validation.isValid(bytes) else { throw .invalidUTF8 }
        // RFC 8259 §8.1 lets a parser ignore a leading byte order mark.
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var parser = JSONParser(bytes: bytes, index: start)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw .syntax }
        return value
    }

    /// Parses `text` as exactly one JSON text.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    // MARK: - Values

    /// Parses the value starting at `index`; `depth` counts the containers already open around it.
    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard let byte = peek() else { throw .syntax }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(String(decoding: try parseStringBytes(), as: UTF8.self))
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw .syntax
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= Self.maxDepth else { throw .tooDeep }
        index += 1  // "["
        var items: [JSONValue] = []
        skipWhitespace()
        if consume(UInt8(ascii: "]")) { return .array(items) }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth))
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            guard consume(UInt8(ascii: "]")) else { throw .syntax }
            return .array(items)
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= Self.maxDepth else { throw .tooDeep }
        index += 1  // "{"
        var members: [JSONMember] = []
        // Keys are compared as bytes: Swift's String equality would merge canonically equivalent keys.
        var seenKeys = Set<[UInt8]>()
        skipWhitespace()
        if consume(UInt8(ascii: "}")) { return .object(members) }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw .syntax }
            let keyBytes = try parseStringBytes()
            let key = String(decoding: keyBytes, as: UTF8.self)
            guard seenKeys.insert(keyBytes).inserted else { throw .duplicateKey(key) }
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { throw .syntax }
            skipWhitespace()
            members.append(JSONMember(key, try parseValue(depth: depth)))
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            guard consume(UInt8(ascii: "}")) else { throw .syntax }
            return .object(members)
        }
    }

    private mutating func expectLiteral(_ literal: String) throws(JSONParseError) {
        guard bytes[index...].starts(with: literal.utf8) else { throw .syntax }
        index += literal.utf8.count
    }

    // MARK: - Numbers

    /// `number = [ minus ] int [ frac ] [ exp ]` (RFC 8259 §6).
    private mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = index
        _ = consume(UInt8(ascii: "-"))
        // int = zero / ( digit1-9 *DIGIT ): a leading zero stands alone, so "01" leaves "1" unparsed.
        if !consume(UInt8(ascii: "0")) {
            guard skipDigits() > 0 else { throw .syntax }
        }
        if consume(UInt8(ascii: ".")) {
            guard skipDigits() > 0 else { throw .syntax }
        }
        let significand = bytes[start..<index]
        if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
            _ = consume(UInt8(ascii: "+")) || consume(UInt8(ascii: "-"))
            guard skipDigits() > 0 else { throw .syntax }
        }
        let literal = String(decoding: bytes[start..<index], as: UTF8.self)
        // The grammar above is a subset of what Double(String) reads, so nil cannot happen; treat it as syntax.
        guard let value = Double(literal) else { throw .syntax }
        guard Self.holds(value, significand: significand) else { throw .numberOutOfRange }
        return JSONNumber(literal: literal, value: value)
    }

    /// Whether `value`, the nearest `Double` to a literal whose text before any exponent is `significand`, stands
    /// for the number as written: finite (`1e400` overflows to infinity), and zero only if every digit of the
    /// significand is `0` (`1e-400` underflows to zero; `-0` and `0e400` are zero). A subnormal such as `5e-324`
    /// is held, with fewer bits of precision, as any decimal fraction is held by its nearest `Double`.
    static func holds(_ value: Double, significand: ArraySlice<UInt8>) -> Bool {
        guard value.isFinite else { return false }
        return value != 0 || !significand.contains { (UInt8(ascii: "1")...UInt8(ascii: "9")).contains($0) }
    }

    private mutating func skipDigits() -> Int {
        let start = index
        while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
        return index - start
    }

    // MARK: - Bytes

    /// The byte at `index`, or nil at the end.
    func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    /// Steps over `byte` if it is next.
    mutating func consume(_ byte: UInt8) -> Bool {
        guard peek() == byte else { return false }
        index += 1
        return true
    }

    /// `ws = *( %x20 / %x09 / %x0A / %x0D )` (RFC 8259 §2).
    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }
}
