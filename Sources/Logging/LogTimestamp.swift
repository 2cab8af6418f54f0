#if canImport(Glibc)
import Glibc
#endif

/// RFC 3339 UTC timestamps with milliseconds (`2024-05-01T09:03:07.042Z`), written straight into a line's bytes.
enum LogTimestamp {
    /// Appends the current wall-clock time. `clock_gettime` and `gmtime_r` make no system call here.
    static func appendNow(to bytes: inout [UInt8]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        append(seconds: Int(now.tv_sec), milliseconds: Int(now.tv_nsec / 1_000_000), to: &bytes)
    }

    /// Appends the time `seconds` after the Unix epoch plus `milliseconds` (0...999).
    static func append(seconds: Int, milliseconds: Int, to bytes: inout [UInt8]) {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        appendDigits(Int(parts.tm_year) + 1900, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(Int(parts.tm_mon) + 1, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(Int(parts.tm_mday), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(Int(parts.tm_hour), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(Int(parts.tm_min), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(Int(parts.tm_sec), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendDigits(milliseconds, width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Appends `value` (non-negative) in decimal, zero-padded to at least `width` digits, without allocating.
    static func appendDigits(_ value: Int, width: Int = 1, to bytes: inout [UInt8]) {
        var divisor = 1
        var digitCount = 1
        while divisor <= value / 10 {
            divisor *= 10
            digitCount += 1
        }
        for _ in digitCount..<max(width, digitCount) { bytes.append(UInt8(ascii: "0")) }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }
}
