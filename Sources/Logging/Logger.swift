/// Writes structured lines (logfmt or JSON) at or above a level through a `LogWriter`.
/// Callers pass only fields that are safe to keep: never bodies, keys or passwords.
public struct Logger: Sendable {
    /// Lines below this level are skipped before any formatting.
    public let level: LogLevel
    public let format: LogFormat
    public let writer: LogWriter

    public init(level: LogLevel, format: LogFormat, writer: LogWriter) {
        self.level = level
        self.format = format
        self.writer = writer
    }

    /// A line for `event` to fill in and `emit`, or nil when `level` is below the threshold.
    public func line(_ level: LogLevel, _ event: String) -> LogLine? {
        level >= self.level ? LogLine(format: format, level: level, event: event) : nil
    }

    /// Queues a filled-in line for writing.
    public func emit(_ line: inout LogLine) {
        writer.append(line.finish())
    }

    /// Logs `event` with `fields`, in order.
    public func log(_ level: LogLevel, _ event: String, _ fields: KeyValuePairs<String, LogValue> = [:]) {
        guard var line = line(level, event) else { return }
        for (key, value) in fields {
            switch value {
            case .text(let text): line.string(key, text)
            case .integer(let number): line.integer(key, number)
            case .boolean(let flag): line.boolean(key, flag)
            }
        }
        emit(&line)
    }
}

/// A field value: text (written as a string) or a number or boolean (written bare in JSON too).
public enum LogValue: ExpressibleByStringInterpolation, Sendable {
    case text(String)
    case integer(Int)
    case boolean(Bool)

    public init(stringLiteral value: String) {
        self = .text(value)
    }
}
