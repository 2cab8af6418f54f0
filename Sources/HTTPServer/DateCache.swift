import HTTPCore
import Locking

#if canImport(Glibc)
import Glibc
#endif

/// The current `Date` header value, formatted at most once per second.
final class DateCache: Sendable {
    private let cached = Locked<(second: Int, text: String)>((-1, ""))

    var now: String {
        let second = time(nil)
        return cached.withLock { entry in
            if entry.second != second {
                entry = (second, HTTPDate.format(secondsSince1970: second))
            }
            return entry.text
        }
    }
}
