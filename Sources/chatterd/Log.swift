#if canImport(Glibc)
import Glibc
#endif

/// One `key=value` line per event on stderr (journald keeps it). Never bodies, keys or passwords.
enum Log {
    static func write(_ line: String) {
        // One write(2) per line, so lines from different threads never interleave.
        let bytes = Array("chatterd: \(line)\n".utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
