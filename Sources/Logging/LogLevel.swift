/// How much a log line matters; lines below the configured level are not written.
public enum LogLevel: Int, Comparable, CaseIterable, Sendable {
    case debug, info, warn, error

    /// The level's name in flags, variables and log lines.
    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warn: "warn"
        case .error: "error"
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}

/// How log lines are written: `key=value` pairs (logfmt) or one JSON object per line.
public enum LogFormat: String, CaseIterable, Sendable {
    case logfmt, json
}
