import Logging

/// A command's options, set from flags and from `CHATTERD_*` environment variables, as its table says.
///
/// Every flag `--foo-bar` can also come from `CHATTERD_FOO_BAR`; a flag on the command line wins. Switches
/// (`--plain-http`, `--reuse-port`) take 1/true/yes or 0/false/no there. An empty variable counts as unset, so an
/// environment file can list a setting without giving it. The database URL falls back to `DATABASE_URL` last.
protocol CommandOptions {
    /// The command's name, for messages.
    static var command: String { get }
    /// What the command does, for `--help`.
    static var summary: String { get }
    /// Every option the command takes, in the order `--help` lists them.
    static var options: [CommandOption<Self>] { get }
    /// The database URL, which also falls back to `DATABASE_URL`.
    var databaseURL: String? { get set }
    var migrationsDirectory: String { get set }
    var log: LogOptions { get set }
    init()
}

extension CommandOptions {
    /// Every flag the command takes.
    static var flagNames: [String] { options.map(\.flag) }

    /// Options from `arguments`, then from `environment` for whatever they leave unset.
    init(arguments: [String], environment: [String: String]) throws(UsageError) {
        self.init()
        for option in Self.options {
            let variable = Self.variable(for: option.flag)
            guard let value = environment[variable], !value.isEmpty else { continue }
            var cursor = ArgumentCursor(["\(option.flag)=\(value)"])
            _ = cursor.nextFlag()
            do {
                try option.apply(&self, &cursor)
            } catch {
                throw UsageError(description: "\(variable): \(error.description)")
            }
        }
        var cursor = ArgumentCursor(arguments)
        while let flag = cursor.nextFlag() {
            guard let option = Self.options.first(where: { $0.flag == flag }) else {
                throw UsageError(description: "unknown option for \(Self.command): \(flag)")
            }
            try option.apply(&self, &cursor)
        }
        if databaseURL == nil, let url = environment["DATABASE_URL"], !url.isEmpty { databaseURL = url }
    }

    /// The environment variable for `flag`: `--pool-size` → `CHATTERD_POOL_SIZE`.
    static func variable(for flag: String) -> String {
        "CHATTERD_" + flag.dropFirst(2).uppercased().replacing("-", with: "_")
    }

    /// The options every command has for the database.
    static var databaseOptions: [CommandOption<Self>] {
        [
            .text(
                "--database-url", "URL", "libpq URI or key=value string", \.databaseURL,
                fallback: "DATABASE_URL, then libpq's PG* variables"),
            .text("--migrations", "DIR", "migration files, applied in name order", \.migrationsDirectory),
        ]
    }

    /// The options every command has for its log lines.
    static var logOptions: [CommandOption<Self>] {
        [
            .choice("--log-format", "log lines on stderr", \.log.format, LogFormat.allCases.map { ($0.rawValue, $0) }),
            .choice(
                "--log-level", "lines below it are not written; info has one line per request", \.log.level,
                LogLevel.allCases.map { ($0.name, $0) }),
        ]
    }
}
