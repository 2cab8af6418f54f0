import ChattModel
import Locking

/// A test repository that keeps chatts in memory and can be told to fail every call with a given error.
public final class InMemoryChattRepository: ChattRepository {
    private struct State {
        /// In feed order.
        var rows: [SequencedChatt] = []
        var lastSequence: Int64 = 0
        /// The commit clock (migrations/0005): every stored chatt takes the next count.
        var clock = CommitPosition(epoch: CommitPosition.firstEpoch, count: 0)
        var failure: RepositoryError?
        var snapshotReads = 0
        var versionReads = 0
        var deltaReads = 0
        var heldSnapshot: SnapshotGate?

        var chatts: [StoredChatt] { rows.map(\.chatt) }
        var version: ChattsVersion { ChattsVersion(count: rows.count, lastSequence: lastSequence, position: clock) }
    }

    private let state = Locked(State())

    public init(_ chatts: [StoredChatt] = []) {
        state.withLock { state in
            state.rows = chatts.enumerated().map {
                SequencedChatt(sequence: Int64($0.offset + 1), chatt: $0.element, commit: Int64($0.offset + 1))
            }
            state.lastSequence = Int64(chatts.count)
            state.clock.count = Int64(chatts.count)
        }
    }

    /// Makes every later call throw `error` (nil: succeed again).
    public func fail(with error: RepositoryError?) {
        state.withLock { $0.failure = error }
    }

    /// The stored chatts, for assertions.
    public var chatts: [StoredChatt] {
        state.withLock { $0.chatts }
    }

    /// Stores `chatt` at once, on the caller's thread, and then calls `completion`.
    public func add(_ chatt: NewChatt, completion: @escaping @Sendable (Result<ChattBatch, RepositoryError>) -> Void) {
        completion(state.withLock { (state: inout State) -> Result<ChattBatch, RepositoryError> in
            if let failure = state.failure { return .failure(failure) }
            let serial = state.lastSequence + 1
            let timestamp = "2026-03-25T08:11:59." + String(100_000 + serial) + "Z"
            let row = Self.store(chatt, timestamp: timestamp, in: &state)
            return .success(ChattBatch([row], epoch: state.clock.epoch))
        })
    }

    /// Stores `chatt` as committed at `timestamp` with the next sequence number, in its place in feed order, as
    /// another writer's transaction would that began earlier and committed later; no batch is returned to
    /// anyone, as for a chatt another process stored.
    @discardableResult
    public func storeCommitted(_ chatt: NewChatt, timestamp: String) -> SequencedChatt {
        state.withLock { Self.store(chatt, timestamp: timestamp, in: &$0) }
    }

    private static func store(_ chatt: NewChatt, timestamp: String, in state: inout State) -> SequencedChatt {
        state.lastSequence += 1
        state.clock.count += 1
        let serial = state.lastSequence
        let id = "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - String(serial).count) + String(serial)
        let row = SequencedChatt(
            sequence: serial,
            chatt: StoredChatt(
                name: chatt.name, message: chatt.message, id: id, timestamp: timestamp, geodata: chatt.geodata),
            commit: state.clock.count)
        let place = state.rows.firstIndex { row.position < $0.position } ?? state.rows.endIndex
        state.rows.insert(row, at: place)
        return row
    }

    /// Every chatt and the version, counted as a full read; a held read waits at its gate after reading.
    public func readChatts(
        before deadline: ContinuousClock.Instant, _ row: (SequencedChatt) -> Void
    ) async throws(RepositoryError) -> ChattsVersion {
        let (rows, version, gate) = try takeAll()
        await gate?.hold()
        rows.forEach(row)
        return version
    }

    /// Every row, the version and the gate the read must wait at (if held), counted as a full read.
    private func takeAll() throws(RepositoryError) -> ([SequencedChatt], ChattsVersion, SnapshotGate?) {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            state.snapshotReads += 1
            let gate = state.heldSnapshot
            state.heldSnapshot = nil
            return (state.rows, state.version, gate)
        }
    }

    public func chatts(
        after position: FeedPosition?, limit: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> ChattDelta {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            state.deltaReads += 1
            let after = state.rows.filter { row in position.map { $0 < row.position } ?? true }
            return ChattDelta(chatts: Array(after.prefix(limit)), version: state.version)
        }
    }

    /// Rows committed after `count`, in commit order, with the clock.
    public func committed(
        after count: Int64, limit: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> CommittedChatts {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            let after = state.rows.filter { $0.commit > count }.sorted { $0.commit < $1.commit }
            return CommittedChatts(chatts: Array(after.prefix(limit)), position: state.clock)
        }
    }

    /// An operator's edit: the clock moves to the next epoch, as an UPDATE's would.
    public func edit() {
        state.withLock { $0.clock.epoch += 1 }
    }

    /// The commit clock.
    public var clock: CommitPosition {
        state.withLock { $0.clock }
    }

    /// Makes the next full read read the chatts, then wait until the gate is released before returning.
    public func holdNextSnapshot() -> SnapshotGate {
        let gate = SnapshotGate()
        state.withLock { $0.heldSnapshot = gate }
        return gate
    }

    public func version(before deadline: ContinuousClock.Instant) async throws(RepositoryError) -> ChattsVersion {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            state.versionReads += 1
            return state.version
        }
    }

    /// How many times the version was asked: a database round trip each in a real store.
    public var versionReads: Int {
        state.withLock { $0.versionReads }
    }

    /// How many times the chatts were read in full, to show the feed cache at work.
    public var snapshotReads: Int {
        state.withLock { $0.snapshotReads }
    }

    /// How many times the chatts after a position were read.
    public var deltaReads: Int {
        state.withLock { $0.deltaReads }
    }

    public func ping(before deadline: ContinuousClock.Instant) async throws(RepositoryError) {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
        }
    }
}

/// Holds one full read between reading the chatts and returning them, so a test can act meanwhile.
public final class SnapshotGate: Sendable {
    private struct State {
        var entered = false
        var released = false
        /// Those waiting for the read to reach the gate.
        var watchers: [CheckedContinuation<Void, Never>] = []
        /// The held read, once it has reached the gate.
        var held: CheckedContinuation<Void, Never>?
    }

    private let state = Locked(State())

    /// Called by the held read: announces it, then suspends until `release()`.
    fileprivate func hold() async {
        await withCheckedContinuation { continuation in
            let (watchers, released) = state.withLock { state in
                state.entered = true
                if !state.released { state.held = continuation }
                defer { state.watchers = [] }
                return (state.watchers, state.released)
            }
            for watcher in watchers { watcher.resume() }
            if released { continuation.resume() }
        }
    }

    /// Suspends until the held read has read the chatts.
    public func waitUntilEntered() async {
        await withCheckedContinuation { continuation in
            let entered = state.withLock { state in
                if !state.entered { state.watchers.append(continuation) }
                return state.entered
            }
            if entered { continuation.resume() }
        }
    }

    /// Lets the held read return.
    public func release() {
        let held = state.withLock { state in
            state.released = true
            defer { state.held = nil }
            return state.held
        }
        held?.resume()
    }
}
