import HTTPServer

/// What the command line asked for.
enum Command {
    case serve(ServeOptions)
    case migrate(MigrateOptions)
    case help
    case version
}

extension Command {
    /// Parses `arguments` (without the program name); options not given fall back to `environment`
    /// (see `CommandOptions`).
    static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
        guard let first = arguments.first else { return .help }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "-h", "--help", "help": return .help
        case "-V", "--version", "version": return .version
        case "serve": return .serve(try ServeOptions(arguments: rest, environment: environment))
        case "migrate": return .migrate(try MigrateOptions(arguments: rest, environment: environment))
        default: throw UsageError(description: "unknown command: \(first)")
        }
    }
}

/// Logging options, shared by every command.
struct LogOptions {
    var level = LogLevel.info
    var format = LogFormat.logfmt

    static let flagNames = ["--log-format", "--log-level"]

    mutating func set(_ flag: String, from cursor: inout ArgumentCursor) throws(UsageError) {
        switch flag {
        case "--log-format": format = try cursor.choice(for: flag, LogFormat.allCases.map { ($0.rawValue, $0) })
        default: level = try cursor.choice(for: flag, LogLevel.allCases.map { ($0.name, $0) })
        }
    }
}

/// Options of `chatterd serve`. Server limits live in `server`, whose defaults are API.md's.
struct ServeOptions: CommandOptions {
    var server = ServerConfiguration()
    var certificatePath = "./chatterd.crt"
    var keyPath = "./chatterd.key"
    var plainHTTP = false
    var databaseURL: String?
    var directDatabaseURL: String?
    var migrationsDirectory = "./migrations"
    var poolSize = 8
    var drainSeconds = 10.0
    /// Check the store's version on every feed read instead of trusting change notifications, so that a
    /// post through any process is in the very next read from any other (at a query per read).
    var strictFeeds = false
    var log = LogOptions()

    static let command = "serve"
    static let flagNames = [
        "--host", "--port", "--cert", "--key", "--plain-http", "--reuse-port", "--database-url",
        "--direct-database-url", "--migrations", "--pool-size", "--drain-timeout", "--strict-feeds",
    ] + LogOptions.flagNames + ServerConfiguration.flagNames

    mutating func set(_ flag: String, from cursor: inout ArgumentCursor) throws(UsageError) {
        switch flag {
        case "--host": server.host = try cursor.value(for: flag)
        case "--port": server.port = try cursor.number(for: flag)
        case "--cert": certificatePath = try cursor.value(for: flag)
        case "--key": keyPath = try cursor.value(for: flag)
        case "--plain-http": plainHTTP = try cursor.switchValue(for: flag)
        case "--reuse-port": server.reusePort = try cursor.switchValue(for: flag)
        case "--database-url": databaseURL = try cursor.value(for: flag)
        case "--direct-database-url": directDatabaseURL = try cursor.value(for: flag)
        case "--migrations": migrationsDirectory = try cursor.value(for: flag)
        case "--pool-size": poolSize = try cursor.number(for: flag, atLeast: 1)
        case "--drain-timeout": drainSeconds = try cursor.seconds(for: flag)
        case "--strict-feeds": strictFeeds = try cursor.switchValue(for: flag)
        case "--log-format", "--log-level": try log.set(flag, from: &cursor)
        default: try server.set(flag, from: &cursor)
        }
    }
}

/// Options of `chatterd migrate`.
struct MigrateOptions: CommandOptions {
    var databaseURL: String?
    var directDatabaseURL: String?
    var migrationsDirectory = "./migrations"
    var log = LogOptions()

    static let command = "migrate"
    static let flagNames = ["--database-url", "--direct-database-url", "--migrations"] + LogOptions.flagNames

    mutating func set(_ flag: String, from cursor: inout ArgumentCursor) throws(UsageError) {
        switch flag {
        case "--database-url": databaseURL = try cursor.value(for: flag)
        case "--direct-database-url": directDatabaseURL = try cursor.value(for: flag)
        case "--migrations": migrationsDirectory = try cursor.value(for: flag)
        default: try log.set(flag, from: &cursor)
        }
    }
}

extension ServerConfiguration {
    /// The `serve` flags that set server limits.
    static let flagNames = [
        "--max-connections", "--max-requests-per-connection", "--max-request-line-bytes", "--max-header-bytes",
        "--max-header-count", "--max-body-bytes", "--handshake-timeout", "--header-timeout", "--body-timeout",
        "--send-timeout", "--keepalive-timeout",
    ]

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
