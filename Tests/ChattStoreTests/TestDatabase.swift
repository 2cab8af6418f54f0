import ChattModel
@testable import ChattStore
import Foundation
import Testing

/// A throwaway database for one test: created through `CHATTERD_TEST_DATABASE_URL`, dropped afterwards.
struct TestDatabase {
    /// The admin connection string the test command provides; nil skips the integration suites.
    static let adminConninfo = ProcessInfo.processInfo.environment["CHATTERD_TEST_DATABASE_URL"]
    /// Whether integration tests can run.
    static let isConfigured = adminConninfo != nil
    /// The repository's `migrations/` directory.
    static let migrationsDirectory = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "migrations").path

    /// The database's name.
    let name: String
    private let admin: String

    /// Creates a fresh database (migrated unless told otherwise), runs `body`, then drops it.
    static func with<T>(migrated: Bool = true, _ body: (TestDatabase) async throws -> T) async throws -> T {
        let database = try create(migrated: migrated)
        defer { database.drop() }
        return try await body(database)
    }

    /// Creates a fresh database (migrated unless told otherwise); `drop()` removes it.
    static func create(migrated: Bool = true) throws -> TestDatabase {
        let admin = try #require(adminConninfo, "CHATTERD_TEST_DATABASE_URL is not set")
        let database = TestDatabase(name: "chatterd_test_\(UInt64.random(in: 0...UInt64.max))", admin: admin)
        try database.adminStatement("SELECT format('CREATE DATABASE %I', $1::text)")
        if migrated {
            do {
                _ = try Migrator.migrate(conninfo: database.conninfo(), directory: migrationsDirectory)
            } catch {
                database.drop()
                throw error
            }
        }
        return database
    }

    /// Drops the database, whoever is still connected.
    func drop() {
        try? adminStatement("SELECT format('DROP DATABASE %I WITH (FORCE)', $1::text)")
    }

    /// A connection string for this database, with extra libpq keywords.
    func conninfo(_ extra: [String: String] = [:]) -> String {
        let settings = extra.merging(["dbname": name]) { _, ours in ours }.sorted { $0.key < $1.key }
        if admin.hasPrefix("postgresql://") || admin.hasPrefix("postgres://") {
            // URI form: keywords may also be given as query parameters, and later ones win. libpq refuses
            // a second '=' in a parameter, so values are fully percent-encoded.
            let unreserved = CharacterSet(
                charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/")
            let query = settings.map { key, value in
                "\(key)=\(value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? value)"
            }
            return admin + (admin.contains("?") ? "&" : "?") + query.joined(separator: "&")
        }
        // key=value form: later keywords win.
        let quoted = settings.map { key, value in
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
            return "\(key)='\(escaped)'"
        }
        return ([admin] + quoted).joined(separator: " ")
    }

    /// A pool on this database.
    func pool(
        size: Int = 4, acquireTimeout: Duration = .seconds(2), statementTimeout: Duration = .seconds(5),
        extra: [String: String] = [:]
    ) -> PGConnectionPool {
        PGConnectionPool(
            conninfo: conninfo(extra), size: size, acquireTimeout: acquireTimeout, statementTimeout: statementTimeout)
    }

    /// Runs one query on a fresh connection to this database and returns the first column of each row.
    func column(_ sql: String, _ parameters: [String?] = []) throws -> [String?] {
        let result = try Self.plainConnection(conninfo()).query(sql, parameters)
        return (0..<result.rowCount).map { result.string(row: $0, column: 0) }
    }

    /// A connection of the test's own, outside any pool: its statements block, as an administrator's would.
    static func plainConnection(_ conninfo: String) throws(StoreError) -> PGConnection {
        try PGConnection(parameters: ConnectionParameters(conninfo: conninfo, statementTimeout: .seconds(5)))
    }

    /// Has the server quote our name into a statement, then runs that statement on the admin database.
    /// (Identifiers cannot be parameters; format's %I quotes them, so nothing is spliced in by hand.)
    private func adminStatement(_ template: String) throws {
        let connection = try Self.plainConnection(admin)
        let statement = try connection.query(template, [name])
        _ = try connection.query(try statement.requiredString(row: 0, column: 0, name: "format"))
    }
}

/// The error `body` threw, or nil when it returned normally.
func caught<E: Error>(_ body: () throws(E) -> Void) -> E? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}

/// `caught` for a body that suspends.
func caughtAsync<E: Error>(_ body: () async throws(E) -> Void) async -> E? {
    do {
        try await body()
        return nil
    } catch {
        return error
    }
}

extension RepositoryError {
    /// A case without its log text.
    enum Kind { case unavailable, rejected, failed }

    /// The case without its log text.
    var kind: Kind {
        switch self {
        case .unavailable: .unavailable
        case .rejected: .rejected
        case .failed: .failed
        }
    }
}

/// Runs `body(index)` for every index in `0..<count`, all at once, each a task, and returns what they gave (in the
/// order they finished).
func concurrently<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) async -> T) async -> [T] {
    await withTaskGroup(of: T.self) { callers in
        for index in 0..<count { callers.addTask { await body(index) } }
        return await callers.reduce(into: []) { $0.append($1) }
    }
}

/// Runs `body` on a new thread (for a blocking call); the group is left when it returns.
func inBackground(_ body: @escaping @Sendable () -> Void) -> DispatchGroup {
    let group = DispatchGroup()
    group.enter()
    Thread {
        body()
        group.leave()
    }.start()
    return group
}

/// The seconds `body` took.
func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

extension ContinuousClock.Instant {
    /// A deadline for a database call that no passing test reaches.
    static var soon: Self { .now + .seconds(30) }
}

/// Polls `condition` every 5 ms; false if it is still false after 5 s.
func waitUntil(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// Integration suites run one test at a time (they share one server), on Dispatch's threads (see `OnDispatch`),
/// and only when a database is configured.
@Suite(.serialized, .enabled(if: TestDatabase.isConfigured, "set CHATTERD_TEST_DATABASE_URL to run"), .onDispatch)
enum DatabaseTests {}
