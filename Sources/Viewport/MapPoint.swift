import ASCII

/// Where a chatt was posted: a longitude and a latitude in degrees.
public struct MapPoint: Sendable, Equatable {
    public var longitude: Double
    public var latitude: Double

    public init(longitude: Double, latitude: Double) {
        self.longitude = longitude
        self.latitude = latitude
    }

    /// Where a chatt with this `geodata` string is located: its text starts with `[`, a JSON number (the latitude,
    /// within -90...90), `,` and a JSON number (the longitude, within -180...180), blanks allowed between them.
    /// Every geodata the API accepts is located (docs/API.md); one written by hand into the store that does not
    /// start like that is not, and no box holds it. Only the two numbers are read: the rest of the string is the
    /// client's, and a post has checked it already.
    public init?(geodata: String) {
        var scanner = NumberScanner(geodata.utf8)
        guard scanner.skip(UInt8(ascii: "[")), let latitude = scanner.number(), scanner.skip(UInt8(ascii: ",")),
            let longitude = scanner.number(), (-90.0...90.0).contains(latitude),
            (-180.0...180.0).contains(longitude)
        else { return nil }
        self.init(longitude: longitude, latitude: latitude)
    }
}

/// Reads JSON numbers and punctuation from the start of a text, skipping blanks before each.
private struct NumberScanner {
    let bytes: String.UTF8View
    var index: String.UTF8View.Index

    init(_ bytes: String.UTF8View) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    private mutating func skipBlanks() {
        while index < bytes.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) {
            index = bytes.index(after: index)
        }
    }

    /// Moves past `byte` (after blanks) if it is next.
    mutating func skip(_ byte: UInt8) -> Bool {
        skipBlanks()
        guard index < bytes.endIndex, bytes[index] == byte else { return false }
        index = bytes.index(after: index)
        return true
    }

    /// The JSON number next (after blanks): `-`? (`0` | [1-9][0-9]*) (`.` [0-9]+)? ([eE] [+-]? [0-9]+)?
    mutating func number() -> Double? {
        skipBlanks()
        let start = index
        _ = accept { $0 == UInt8(ascii: "-") }
        guard let first = peek(), ASCII.isDigit(first) else { return nil }
        advance()
        if first != UInt8(ascii: "0") { while accept(ASCII.isDigit) {} }
        if accept({ $0 == UInt8(ascii: ".") }) {
            guard accept(ASCII.isDigit) else { return nil }
            while accept(ASCII.isDigit) {}
        }
        if accept({ $0 | 0x20 == UInt8(ascii: "e") }) {
            _ = accept { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "+") }
            guard accept(ASCII.isDigit) else { return nil }
            while accept(ASCII.isDigit) {}
        }
        // Double's own parser rounds correctly, as PostgreSQL's float8 input does.
        guard let value = Double(Substring(bytes[start..<index])), value.isFinite else { return nil }
        return value
    }

    private func peek() -> UInt8? { index < bytes.endIndex ? bytes[index] : nil }
    private mutating func advance() { index = bytes.index(after: index) }

    private mutating func accept(_ test: (UInt8) -> Bool) -> Bool {
        guard let byte = peek(), test(byte) else { return false }
        advance()
        return true
    }
}
