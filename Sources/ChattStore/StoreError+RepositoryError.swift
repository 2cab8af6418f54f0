import ChattModel

extension StoreError {
    /// SQLSTATEs meaning the value itself was refused: string too long (22001), bad encoding (22021),
    /// untranslatable character (22P05), check constraint (23514). Retrying cannot help; the client must change it.
    static let rejectedStates: Set<String> = ["22001", "22021", "22P05", "23514"]

    /// SQLSTATEs meaning the server is going away, starting up, overloaded or too slow right now:
    /// query canceled by statement_timeout (57014), admin/crash shutdown (57P01, 57P02), cannot connect now (57P03),
    /// read-only session (25006).
    /// Whole classes 08 (connection exception) and 53 (insufficient resources) are added by prefix.
    static let unavailableStates: Set<String> = ["57014", "57P01", "57P02", "57P03", readOnlySessionState]

    /// read_only_sql_transaction: the session cannot write, typically because it reached a hot standby. Nothing was
    /// written, and after a failover the next connection finds the new primary, so it is a 503, not a 500.
    static let readOnlySessionState = "25006"

    /// How this failure of `operation` (a repository method's name) looks to the API, its text led by the
    /// operation so that the operator's log says what failed.
    public func repositoryError(during operation: String) -> RepositoryError {
        switch repositoryError {
        case .unavailable(let text): .unavailable("\(operation): \(text)")
        case .rejected(let text): .rejected("\(operation): \(text)")
        case .failed(let text): .failed("\(operation): \(text)")
        }
    }

    /// How this failure looks to the API: `.unavailable` (503), `.rejected` (400) or `.failed` (500), with the
    /// debug description as its text.
    public var repositoryError: RepositoryError {
        let text = debugDescription
        switch code {
        case .connectFailed, .connectionLost, .timedOut, .backingOff, .poolTimeout, .poolClosed, .queueFull:
            return .unavailable(text)
        case .invalidParameter:
            return .rejected(text)
        case .invalidConninfo, .decodingFailed, .migrationsDirectoryMissing, .invalidMigration:
            return .failed(text)
        case .queryFailed, .migrationFailed:
            break
        }
        guard let sqlState else { return .failed(text) }
        if Self.rejectedStates.contains(sqlState) { return .rejected(text) }
        if Self.unavailableStates.contains(sqlState) || sqlState.hasPrefix("08") || sqlState.hasPrefix("53") {
            return .unavailable(text)
        }
        return .failed(text)
    }
}
