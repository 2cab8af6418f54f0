/// A command's options, set from flags and from `CHATTERD_*` environment variables.
///
/// Every flag `--foo-bar` can also come from `CHATTERD_FOO_BAR`; a flag on the command line wins. Switches
/// (`--plain-http`, `--reuse-port`) take 1/true/yes or 0/false/no there. An empty variable counts as unset, so an
/// environment file can list a setting without giving it. The database URL falls back to `DATABASE_URL` last.
protocol CommandOptions {
    /// The command's name, for messages.
    static var command: String { get }
    /// Every flag the command takes.
    static var flagNames: [String] { get }
    /// The database URL, which also falls back to `DATABASE_URL`.
    var databaseURL: String? { get set }
    /// The URL of a session straight to PostgreSQL, for what a transaction-mode pooler cannot carry.
    var directDatabaseURL: String? { get set }
    init()
    /// Applies one flag; `cursor` holds its value, if any.
    mutating func set(_ flag: String, from cursor: inout ArgumentCursor) throws(UsageError)
}

extension CommandOptions {
    /// Options from `arguments`, then from `environment` for whatever they leave unset.
    init(arguments: [String], environment: [String: String]) throws(UsageError) {
        self.init()
        for flag in Self.flagNames {
            let variable = Self.variable(for: flag)
            guard let value = environment[variable], !value.isEmpty else { continue }
            var cursor = ArgumentCursor(["\(flag)=\(value)"])
            _ = cursor.nextFlag()
            do {
                try set(flag, from: &cursor)
            } catch {
                throw UsageError(description: "\(variable): \(error.description)")
            }
        }
        var cursor = ArgumentCursor(arguments)
        while let flag = cursor.nextFlag() {
            guard Self.flagNames.contains(flag) else {
                throw UsageError(description: "unknown option for \(Self.command): \(flag)")
            }
            try set(flag, from: &cursor)
        }
        if databaseURL == nil, let url = environment["DATABASE_URL"], !url.isEmpty { databaseURL = url }
    }

    /// The conninfo of the pooled connections ("" leaves everything to libpq's defaults and `PG*` variables).
    var pooledConninfo: String {
        databaseURL ?? ""
    }

    /// The conninfo of the sessions that need one PostgreSQL session to themselves: migrations (a session-level
    /// advisory lock across statements) and `LISTEN`. Without `--direct-database-url`, the pooled one.
    var directConninfo: String {
        directDatabaseURL ?? pooledConninfo
    }

    /// Whether the pooled URL may lead to a transaction-mode pooler, which is what a separate direct URL is for:
    /// the pool then sends no named prepared statements.
    var poolMayBeAPooler: Bool {
        directDatabaseURL != nil
    }

    /// The environment variable for `flag`: `--pool-size` → `CHATTERD_POOL_SIZE`.
    static func variable(for flag: String) -> String {
        "CHATTERD_" + flag.dropFirst(2).uppercased().replacing("-", with: "_")
    }
}
