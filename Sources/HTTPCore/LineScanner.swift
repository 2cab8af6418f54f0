/// The outcome of looking for the end of one line.
enum LineScan: Equatable {
    /// A complete line: `length` content bytes, then CRLF; `containsControl` if a CTL other than HTAB, or DEL,
    /// is among them (invalid in field lines, RFC 9110 §5.5).
    case line(length: Int, containsControl: Bool)
    /// No line end yet; call again with more bytes.
    case needMore
    /// A bare CR or bare LF (RFC 9112 §2.2: line ends are CRLF only here).
    case malformed
    /// More content bytes than allowed.
    case tooLong
}

/// Finds CRLF line ends incrementally: it remembers how far it scanned, so bytes arriving one at a time
/// are each looked at once (no rescans, which would make a slow client cost O(n^2)).
struct LineScanner {
    /// Content bytes of the current line already scanned (none of them CR or LF).
    private(set) var scanned = 0
    private var containsControl = false

    /// Scans the line starting at `start`, allowing at most `maxLength` content bytes before CRLF.
    ///
    /// A verdict depends only on the bytes up to the one decided, so any split of the input gives the same result.
    mutating func scan(_ bytes: [UInt8], from start: Int, maxLength: Int) -> LineScan {
        var index = start + scanned
        let end = bytes.count
        // Content bytes may sit at offsets below maxLength (computed without overflow for huge limits).
        let contentEnd = start + min(max(maxLength, 0), end - start)
        while index < end {
            // The common case, printable ASCII (0x20...0x7E), in one comparison: the subtraction wraps below 0x20.
            while index < contentEnd, bytes[index] &- 0x20 < 0x5F { index += 1 }
            guard index < end else { break }
            let byte = bytes[index]
            let offset = index - start
            if byte == ByteClass.cr && offset <= maxLength {
                guard index + 1 < end else { break }
                guard bytes[index + 1] == ByteClass.lf else { return .malformed }
                defer { scanned = 0; containsControl = false }
                return .line(length: offset, containsControl: containsControl)
            }
            if offset >= maxLength { return .tooLong }
            // A CR here would have been handled above, since its offset is below maxLength.
            if byte == ByteClass.lf { return .malformed }
            if byte == 0x7F || (byte < 0x20 && byte != ByteClass.htab) { containsControl = true }
            index += 1
        }
        scanned = index - start
        return .needMore
    }
}
