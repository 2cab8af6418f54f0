/// Why a `chatter` command failed; each case has its own exit status, listed in `chatter --help`.
public enum ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A bad option or value on the command line (or in a `CHATTER_*` variable).
    case usage(String)
    /// TLS could not be set up: CA file unreadable, handshake refused, certificate not trusted or for another name.
    case tls(String)
    /// The server could not be reached, or the connection failed or timed out mid-exchange.
    case connection(String)
    /// The server answered with an error status; `reason` is its `{"error": ...}` text when it sent one.
    case httpStatus(code: Int, reason: String)
    /// The server's answer is not HTTP/1.1, or not the JSON that docs/API.md promises.
    case malformedResponse(String)

    /// Exit status for a usage error (sysexits' EX_USAGE).
    public static let usageExitCode: Int32 = 64
    /// Exit status for a TLS or certificate failure.
    public static let tlsExitCode: Int32 = 65
    /// Exit status when the server is unreachable (refused, unknown host, timeout, reset).
    public static let connectionExitCode: Int32 = 66
    /// Exit status when the server answers with an HTTP error status.
    public static let httpStatusExitCode: Int32 = 67
    /// Exit status for a response that is not what docs/API.md describes.
    public static let malformedResponseExitCode: Int32 = 68

    /// The process exit status for this error.
    public var exitCode: Int32 {
        switch self {
        case .usage: Self.usageExitCode
        case .tls: Self.tlsExitCode
        case .connection: Self.connectionExitCode
        case .httpStatus: Self.httpStatusExitCode
        case .malformedResponse: Self.malformedResponseExitCode
        }
    }

    /// One line for stderr, without the program name, escaped as `TerminalText` does.
    public var description: String {
        let line =
            switch self {
            case .usage(let message): message
            case .tls(let message): "TLS: \(message)"
            case .connection(let message): message
            case .httpStatus(let code, let reason): "server answered \(code): \(reason)"
            case .malformedResponse(let message): "malformed response: \(message)"
            }
        // Messages quote the server (its status line, header values, error reason, ALPN choice) as received;
        // escaping the whole line here, where every error line is made, leaves no path to the terminal raw.
        return TerminalText.escaped(line)
    }
}
