/// Reads the lines of a field section (the header section, or the trailer section of a chunked body)
/// and enforces its size limits: all lines with their CRLFs plus the final CRLF, and the field count.
struct FieldSectionReader {
    /// One line of the section.
    enum Line: Equatable {
        /// A field line with `length` content bytes, to be consumed with its CRLF.
        case field(length: Int)
        /// The empty line ending the section (2 bytes).
        case end
    }

    private var scanner = LineScanner()
    private var sectionBytes = 0
    private var fieldCount = 0
    private let maxBytes: Int
    private let maxCount: Int

    init(maxBytes: Int, maxCount: Int) {
        self.maxBytes = maxBytes
        self.maxCount = maxCount
    }

    /// The next line starting at `start`, or nil until more bytes arrive.
    /// - Throws: `malformed` for a bare CR or LF, or a CTL or DEL in a field line; `.headerTooLarge` as soon as
    ///   a limit is passed.
    mutating func nextLine(_ bytes: [UInt8], at start: Int, malformed: HTTPParseError) throws(HTTPParseError) -> Line? {
        // Each line's content plus its CRLF must fit in what is left of the section.
        switch scanner.scan(bytes, from: start, maxLength: maxBytes - sectionBytes - 2) {
        case .needMore:
            return nil
        case .malformed:
            throw malformed
        case .tooLong:
            throw .headerTooLarge
        case .line(let length, let containsControl):
            sectionBytes += length + 2
            guard length > 0 else { return .end }
            guard fieldCount < maxCount else { throw .headerTooLarge }
            guard !containsControl else { throw malformed }
            fieldCount += 1
            return .field(length: length)
        }
    }
}
