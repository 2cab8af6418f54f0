import ASCII

/// Parses a chunk-size line, `chunk-size [ chunk-ext ]` (RFC 9112 §7.1), whose extensions are checked and ignored.
enum ChunkSizeLine {
    /// Most hex digits in a chunk size; 16 already reach past `Int.max`, which the overflow check catches.
    static let maxDigits = 16

    /// The chunk size of the line content `bytes[range]`, or nil when the line is malformed.
    ///
    /// No whitespace may follow the size itself; BWS is allowed after `;` and around `=`, as in
    /// `chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )`.
    static func parse(_ bytes: [UInt8], _ range: Range<Int>) -> Int? {
        var index = range.lowerBound
        var size = 0
        while index < range.upperBound, let digit = ASCII.hexValue(bytes[index]) {
            guard index - range.lowerBound < maxDigits, size <= (Int.max - digit) / 16 else { return nil }
            size = size * 16 + digit
            index += 1
        }
        guard index > range.lowerBound else { return nil }
        guard index == range.upperBound || bytes[index] == UInt8(ascii: ";") else { return nil }
        return extensionsAreValid(bytes, index..<range.upperBound) ? size : nil
    }

    /// Whether `bytes[range]` is a well-formed `chunk-ext` list.
    private static func extensionsAreValid(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        var index = range.lowerBound
        while index < range.upperBound {
            index = skipWhitespace(bytes, index, range.upperBound)
            guard index < range.upperBound, bytes[index] == UInt8(ascii: ";") else { return false }
            index = skipWhitespace(bytes, index + 1, range.upperBound)
            let nameEnd = skipToken(bytes, index, range.upperBound)
            guard nameEnd > index else { return false }
            index = nameEnd
            let afterSpace = skipWhitespace(bytes, index, range.upperBound)
            if afterSpace < range.upperBound, bytes[afterSpace] == UInt8(ascii: "=") {
                let valueStart = skipWhitespace(bytes, afterSpace + 1, range.upperBound)
                guard let valueEnd = valueEnd(bytes, valueStart, range.upperBound) else { return false }
                index = valueEnd
            }
        }
        return true
    }

    /// The end of a chunk-ext-val (token or quoted-string) starting at `start`, or nil.
    private static func valueEnd(_ bytes: [UInt8], _ start: Int, _ end: Int) -> Int? {
        guard start < end else { return nil }
        guard bytes[start] == UInt8(ascii: "\"") else {
            let tokenEnd = skipToken(bytes, start, end)
            return tokenEnd > start ? tokenEnd : nil
        }
        // quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE (RFC 9110 §5.6.4).
        var index = start + 1
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { return index + 1 }
            if byte == UInt8(ascii: "\\") {
                guard index + 1 < end, ByteClass.isFieldValueByte(bytes[index + 1]) else { return nil }
                index += 2
            } else {
                guard ByteClass.isFieldValueByte(byte) else { return nil }
                index += 1
            }
        }
        return nil
    }

    private static func skipWhitespace(_ bytes: [UInt8], _ start: Int, _ end: Int) -> Int {
        var index = start
        while index < end, ByteClass.isWhitespace(bytes[index]) { index += 1 }
        return index
    }

    private static func skipToken(_ bytes: [UInt8], _ start: Int, _ end: Int) -> Int {
        var index = start
        while index < end, ByteClass.isTokenChar(bytes[index]) { index += 1 }
        return index
    }
}
