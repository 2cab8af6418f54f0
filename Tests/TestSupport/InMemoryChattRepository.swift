import ChattModel
import Dispatch
import Locking

/// A test repository that keeps chatts in memory and can be told to fail every call with a given error.
public final class InMemoryChattRepository: ChattRepository {
    private struct State {
        public var chatts: [StoredChatt] = []
        var failure: RepositoryError?
        public var snapshotReads = 0
        public var versionReads = 0
        var heldSnapshot: SnapshotGate?
    }

    private let state = Locked(State())

    public init(_ chatts: [StoredChatt] = []) {
        state.withLock { $0.chatts = chatts }
    }

    /// Makes every later call throw `error` (nil: succeed again).
    public func fail(with error: RepositoryError?) {
        state.withLock { $0.failure = error }
    }

    /// The stored chatts, for assertions.
    public var chatts: [StoredChatt] {
        state.withLock { $0.chatts }
    }

    public func add(_ chatt: NewChatt) throws(RepositoryError) {
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

    public func snapshot() throws(RepositoryError) -> ChattSnapshot {
        let (snapshot, gate) = try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            state.snapshotReads += 1
            let gate = state.heldSnapshot
            state.heldSnapshot = nil
            return (ChattSnapshot(chatts: state.chatts, version: Self.version(of: state.chatts)), gate)
        }
        gate?.hold()
        return snapshot
    }

    /// Makes the next snapshot() read the chatts, then wait until the gate is released before returning.
    public func holdNextSnapshot() -> SnapshotGate {
        let gate = SnapshotGate()
        state.withLock { $0.heldSnapshot = gate }
        return gate
    }

    public func version() throws(RepositoryError) -> ChattsVersion {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            state.versionReads += 1
            return Self.version(of: state.chatts)
        }
    }

    /// How many times version() was asked: a database round trip each in a real store.
    public var versionReads: Int {
        state.withLock { $0.versionReads }
    }

    /// How many times the chatts were read in full, to show the feed cache at work.
    public var snapshotReads: Int {
        state.withLock { $0.snapshotReads }
    }

    private static func version(of chatts: [StoredChatt]) -> ChattsVersion {
        ChattsVersion(count: chatts.count, lastSequence: Int64(chatts.count))
    }

    public func ping() throws(RepositoryError) {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
        }
    }
}

/// Holds one snapshot() call between reading the chatts and returning them, so a test can act meanwhile.
public final class SnapshotGate: Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    /// Called by the held snapshot(): announces it, then waits for `release()`.
    fileprivate func hold() {
        entered.signal()
        released.wait()
    }

    /// Blocks until the held snapshot() has read the chatts.
    public func waitUntilEntered() {
        entered.wait()
    }

    /// Lets the held snapshot() return.
    public func release() {
        released.signal()
    }
}
