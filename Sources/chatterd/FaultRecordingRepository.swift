import ChattAPI

/// A repository that files the cause of every failure with a `FaultLedger` before passing the error on.
struct FaultRecordingRepository: ChattRepository {
    let base: any ChattRepository
    let ledger: FaultLedger

    func add(_ chatt: NewChatt) throws(RepositoryError) {
        try recording("add") { () throws(RepositoryError) in try base.add(chatt) }
    }

    func snapshot() throws(RepositoryError) -> ChattSnapshot {
        try recording("snapshot") { () throws(RepositoryError) in try base.snapshot() }
    }

    func version() throws(RepositoryError) -> ChattsVersion {
        try recording("version") { () throws(RepositoryError) in try base.version() }
    }

    func ping() throws(RepositoryError) {
        try recording("ping") { () throws(RepositoryError) in try base.ping() }
    }

    private func recording<T>(
        _ operation: String, _ body: () throws(RepositoryError) -> T
    ) throws(RepositoryError) -> T {
        do {
            return try body()
        } catch {
            // The texts are StoreError's debug descriptions: no parameters, passwords or conninfo (see StoreError).
            switch error {
            case .unavailable(let text), .rejected(let text), .failed(let text): ledger.record("\(operation): \(text)")
            }
            throw error
        }
    }
}
