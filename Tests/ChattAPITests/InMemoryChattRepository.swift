import ChattAPI
import Locking

/// A test repository that keeps chatts in memory and can be told to fail every call with a given error.
final class InMemoryChattRepository: ChattRepository {
    private struct State {
        var chatts: [StoredChatt] = []
        var failure: RepositoryError?
        var snapshotReads = 0
    }

    private let state = Locked(State())

    init(_ chatts: [StoredChatt] = []) {
        state.withLock { $0.chatts = chatts }
    }

    /// Makes every later call throw `error` (nil: succeed again).
    func fail(with error: RepositoryError?) {
        state.withLock { $0.failure = error }
    }

    /// The stored chatts, for assertions.
    var chatts: [StoredChatt] {
        state.withLock { $0.chatts }
    }

    func add(_ chatt: NewChatt) throws(RepositoryError) {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            let serial = state.chatts.count + 1
            let id =
                "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - String(serial).count) + String(serial)
            let timestamp = "2026-03-25T08:11:59." + String(100_000 + serial) + "Z"
            state.chatts.append(
                StoredChatt(
                    name: chatt.name, message: chatt.message, id: id, timestamp: timestamp, geodata: chatt.geodata))
        }
    }

    func snapshot() throws(RepositoryError) -> ChattSnapshot {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            state.snapshotReads += 1
            return ChattSnapshot(chatts: state.chatts, version: Self.version(of: state.chatts))
        }
    }

    func version() throws(RepositoryError) -> ChattsVersion {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            return Self.version(of: state.chatts)
        }
    }

    /// How many times the chatts were read in full, to show the feed cache at work.
    var snapshotReads: Int {
        state.withLock { $0.snapshotReads }
    }

    private static func version(of chatts: [StoredChatt]) -> ChattsVersion {
        ChattsVersion(count: chatts.count, lastSequence: Int64(chatts.count))
    }

    func ping() throws(RepositoryError) {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
        }
    }
}
