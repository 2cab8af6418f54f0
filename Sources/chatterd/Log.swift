#if canImport(Glibc)
import Glibc
#endif

/// One `key=value` line per event on stderr (journald keeps it). Never bodies, keys or passwords.
enum Log {
    static func write(_ line: String) {
        fputs("chatterd: \(line)\n", stderr)
    }
}
