import HTTPServer

/// What the command line asked for.
enum Command {
    case serve(ServeOptions)
    case migrate(databaseURL: String?, migrationsDirectory: String)
    case help
    case version
}

/// Options of `chatterd serve`. Server limits live in `server`, whose defaults are API.md's.
struct ServeOptions {
    var server = ServerConfiguration()
    var certificatePath = "./chatterd.crt"
    var keyPath = "./chatterd.key"
    var plainHTTP = false
    var databaseURL: String?
    var migrationsDirectory = "./migrations"
    var poolSize = 8
    var drainSeconds = 10.0
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
}

extension Command {
    /// Parses `arguments` (without the program name).
    static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        guard let first = arguments.first else { return .help }
        var rest = ArgumentCursor(Array(arguments.dropFirst()))
        switch first {
        case "-h", "--help", "help": return .help
        case "-V", "--version", "version": return .version
        case "serve": return .serve(try ServeOptions(parsing: &rest))
        case "migrate":
            var url: String?
            var directory = "./migrations"
            while let flag = rest.nextFlag() {
                switch flag {
                case "--database-url": url = try rest.value(for: flag)
                case "--migrations": directory = try rest.value(for: flag)
                default: throw UsageError(description: "unknown option for migrate: \(flag)")
                }
            }
            return .migrate(databaseURL: url, migrationsDirectory: directory)
        default:
            throw UsageError(description: "unknown command: \(first)")
        }
    }
}

extension ServeOptions {
    init(parsing cursor: inout ArgumentCursor) throws(UsageError) {
        while let flag = cursor.nextFlag() {
            switch flag {
            case "--host": server.host = try cursor.value(for: flag)
            case "--port": server.port = try cursor.number(for: flag)
            case "--cert": certificatePath = try cursor.value(for: flag)
            case "--key": keyPath = try cursor.value(for: flag)
            case "--plain-http": plainHTTP = true
            case "--database-url": databaseURL = try cursor.value(for: flag)
            case "--migrations": migrationsDirectory = try cursor.value(for: flag)
            case "--pool-size": poolSize = try cursor.number(for: flag, atLeast: 1)
            case "--drain-timeout": drainSeconds = try cursor.seconds(for: flag)
            default: try server.set(flag, from: &cursor)
            }
        }
    }
}

extension ServerConfiguration {
    /// Sets the limit a `serve` flag names.
    mutating func set(_ flag: String, from cursor: inout ArgumentCursor) throws(UsageError) {
        switch flag {
        case "--max-connections": maxConnections = try cursor.number(for: flag, atLeast: 1)
        case "--max-requests-per-connection": maxRequestsPerConnection = try cursor.number(for: flag, atLeast: 1)
        case "--max-request-line-bytes": limits.maxRequestLineBytes = try cursor.number(for: flag, atLeast: 16)
        case "--max-header-bytes": limits.maxHeaderBytes = try cursor.number(for: flag, atLeast: 16)
        case "--max-header-count": limits.maxHeaderCount = try cursor.number(for: flag, atLeast: 1)
        case "--max-body-bytes": limits.maxBodyBytes = try cursor.number(for: flag, atLeast: 0)
        case "--handshake-timeout": timeouts.handshakeSeconds = try cursor.seconds(for: flag)
        case "--header-timeout": timeouts.headerSeconds = try cursor.seconds(for: flag)
        case "--body-timeout": timeouts.bodyIdleSeconds = try cursor.seconds(for: flag)
        case "--send-timeout": timeouts.sendIdleSeconds = try cursor.seconds(for: flag)
        case "--keepalive-timeout": timeouts.keepAliveIdleSeconds = try cursor.seconds(for: flag)
        default: throw UsageError(description: "unknown option for serve: \(flag)")
        }
    }
}

/// Walks `--flag value` pairs; also accepts `--flag=value`.
struct ArgumentCursor {
    private var arguments: [String]
    private var pendingValue: String?

    init(_ arguments: [String]) {
        self.arguments = arguments
    }

    mutating func nextFlag() -> String? {
        guard !arguments.isEmpty else { return nil }
        let argument = arguments.removeFirst()
        if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
            pendingValue = String(argument[argument.index(after: equals)...])
            return String(argument[..<equals])
        }
        return argument
    }

    mutating func value(for flag: String) throws(UsageError) -> String {
        if let pendingValue {
            self.pendingValue = nil
            return pendingValue
        }
        guard !arguments.isEmpty else { throw UsageError(description: "\(flag) needs a value") }
        return arguments.removeFirst()
    }

    mutating func number<N: FixedWidthInteger>(for flag: String, atLeast minimum: N = 0) throws(UsageError) -> N {
        let text = try value(for: flag)
        guard let number = N(text), number >= minimum else {
            throw UsageError(description: "\(flag) needs a whole number of at least \(minimum), not \(text)")
        }
        return number
    }

    mutating func seconds(for flag: String) throws(UsageError) -> Double {
        let text = try value(for: flag)
        guard let seconds = Double(text), seconds.isFinite, seconds > 0 else {
            throw UsageError(description: "\(flag) needs a positive number of seconds, not \(text)")
        }
        return seconds
    }
}
