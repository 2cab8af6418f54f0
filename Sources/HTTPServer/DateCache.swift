import HTTPCore

#if canImport(Glibc)
import Glibc
#endif

/// The current `Date` header, made at most once a second. One per I/O queue, used only on that queue, so it
/// needs no lock.
final class DateCache: @unchecked Sendable {  // used only on its I/O queue
    private var second = -1
    private var cachedText = ""
    private var cachedLine: [UInt8] = []

    /// The value, an IMF-fixdate (RFC 9110 §5.6.7).
    var text: String {
        refresh()
        return cachedText
    }

    /// The whole field line, `Date: <value>` and CRLF.
    var line: [UInt8] {
        refresh()
        return cachedLine
    }

    private func refresh() {
        let now = time(nil)
        guard now != second else { return }
        second = now
        cachedText = HTTPDate.format(secondsSince1970: now)
        cachedLine = HTTPResponseSerializer.dateLine(cachedText)
    }
}
