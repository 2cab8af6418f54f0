/// One field line, `field-name ":" OWS field-value OWS` (RFC 9112 §5), as ranges into the buffer.
struct FieldLine {
    /// The field name (a non-empty token).
    var name: Range<Int>
    /// The field value without surrounding whitespace.
    var value: Range<Int>

    /// Parses the line content `bytes[range]` (without CRLF), or returns nil when it is malformed:
    /// obs-fold, whitespace before the colon, or an empty or non-token name.
    ///
    /// The line must hold no CTL other than HTAB, nor DEL: `FieldSectionReader` has checked that while scanning.
    static func parse(_ bytes: [UInt8], _ range: Range<Int>) -> FieldLine? {
        // A leading SP/HTAB would be obs-fold (RFC 9112 §5.2), which we reject; neither is a tchar, so the
        // empty-name check below catches it.
        var index = range.lowerBound
        while index < range.upperBound, ByteClass.isTokenChar(bytes[index]) { index += 1 }
        // Whitespace before the colon must be rejected (RFC 9112 §5.1): it is not a tchar either.
        guard index > range.lowerBound, index < range.upperBound, bytes[index] == UInt8(ascii: ":") else {
            return nil
        }
        let valueRange = (index + 1)..<range.upperBound
        return FieldLine(name: range.lowerBound..<index, value: ByteClass.trimmingWhitespace(bytes, valueRange))
    }
}
