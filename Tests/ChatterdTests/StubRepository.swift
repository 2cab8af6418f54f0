import ChattAPI
import Locking

/// Chatts in memory; `failure` makes every call throw it.
final class StubRepository: ChattRepository {
    private struct State {
        var chatts: [StoredChatt] = []
        var failure: RepositoryError?
    }
    private let state = Locked(State())

    /// Makes later calls throw `error` (nil: succeed again).
    func fail(with error: RepositoryError?) {
        state.withLock { $0.failure = error }
    }

    func add(_ chatt: NewChatt) throws(RepositoryError) {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            let serial = state.chatts.count + 1
            state.chatts.append(StoredChatt(
                name: chatt.name, message: chatt.message, id: "00000000-0000-4000-8000-\(100_000_000_000 + serial)",
                timestamp: "2026-03-25T08:11:59.000000Z", geodata: chatt.geodata))
        }
    }

    func snapshot() throws(RepositoryError) -> ChattSnapshot {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            return ChattSnapshot(
                chatts: state.chatts, version: ChattsVersion(count: state.chatts.count, lastSequence: Int64(state.chatts.count)))
        }
    }

    func version() throws(RepositoryError) -> ChattsVersion {
        try snapshot().version
    }

    func ping() throws(RepositoryError) {
        _ = try version()
    }
}
