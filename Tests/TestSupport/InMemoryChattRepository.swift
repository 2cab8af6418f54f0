import ChattModel
import Locking

/// A test repository that keeps chatts in memory with a change log like migrations/0007's: a stored or removed
/// chatt waits for the next tick, which takes every chatt stored or removed since the one before (and the epoch,
/// which an edit moves). It can be told to fail every call with a given error.
public final class InMemoryChattRepository: ChattRepository {
    private struct Row {
        var chatt: SequencedChatt
        /// The tick that holds it; nil until one does.
        var tick: Int64?
    }

    private struct State {
        /// In feed order.
        var rows: [Row] = []
        /// In the order they were made, each with the tick that holds it (nil until one does).
        var removals: [(removal: RemovedChatt, tick: Int64?)] = []
        var removedBy: [(moderator: String, reason: String)] = []
        var expiryCutoff = ""
        var lastSequence: Int64 = 0
        var ticks: [LogTick] = []
        var epoch: Int64 = 1
        /// Restores so far: a tick made after one gets another token than the tick of the same number before.
        var restores: UInt64 = 0
        var failure: RepositoryError?
        var observers: [@Sendable () -> Void] = []
        var fullReads = 0
        var tickCalls = 0
        var logReads = 0
        var heldFullRead: SnapshotGate?

        var chatts: [StoredChatt] { rows.map(\.chatt.chatt) }
    }

    private let state = Locked(State())

    /// A store holding `chatts` (in feed order), all in its first tick.
    public init(_ chatts: [StoredChatt] = []) {
        state.withLock { state in
            for chatt in chatts {
                state.lastSequence += 1
                state.rows.append(Row(chatt: SequencedChatt(sequence: state.lastSequence, chatt: chatt), tick: 1))
            }
            state.ticks = [Self.tick(1, epoch: state.epoch)]
        }
    }

    /// Tick `number`'s made-up token (before any restore).
    public static func token(of number: Int64) -> UInt64 {
        UInt64(number) &* 2_654_435_761 % 0xffff_ffff_ffff + 1
    }

    private static func tick(_ number: Int64, epoch: Int64) -> LogTick {
        LogTick(tick: number, token: token(of: number), epoch: epoch)
    }

    /// Makes every later call throw `error` (nil: succeed again).
    public func fail(with error: RepositoryError?) {
        state.withLock { $0.failure = error }
    }

    /// The stored chatts in feed order, for assertions.
    public var chatts: [StoredChatt] {
        state.withLock { $0.chatts }
    }

    public func observeCommits(_ observer: @escaping @Sendable () -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Stores `chatt` at once, on the caller's thread, as a batch of its own: the observer is told, then
    /// `completion` is called.
    public func add(_ chatt: NewChatt, completion: @escaping @Sendable (Result<Void, RepositoryError>) -> Void) {
        let outcome = state.withLock { (state: inout State) -> Result<[@Sendable () -> Void], RepositoryError> in
            if let failure = state.failure { return .failure(failure) }
            let timestamp = "2026-03-25T08:11:59." + String(100_000 + state.lastSequence + 1) + "Z"
            Self.store(chatt, timestamp: timestamp, in: &state)
            return .success(state.observers)
        }
        switch outcome {
        case .success(let observers):
            for observer in observers { observer() }
            completion(.success(()))
        case .failure(let error):
            completion(.failure(error))
        }
    }

    /// Stores `chatt` as committed at `timestamp` with the next sequence number, in its place in feed order, as
    /// another writer's transaction would that began earlier and committed later; nobody is told, as for a chatt
    /// another process stored.
    @discardableResult
    public func storeCommitted(_ chatt: NewChatt, timestamp: String) -> SequencedChatt {
        state.withLock { Self.store(chatt, timestamp: timestamp, in: &$0) }
    }

    @discardableResult
    private static func store(_ chatt: NewChatt, timestamp: String, in state: inout State) -> SequencedChatt {
        state.lastSequence += 1
        let serial = state.lastSequence
        let id = "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - String(serial).count) + String(serial)
        let row = SequencedChatt(
            sequence: serial,
            chatt: StoredChatt(
                name: chatt.name, message: chatt.message, id: id, timestamp: timestamp, geodata: chatt.geodata))
        // From the end: a new row almost always goes last, and tests add tens of thousands.
        let place = state.rows.lastIndex { $0.chatt.position <= row.position }.map { $0 + 1 } ?? 0
        state.rows.insert(Row(chatt: row, tick: nil), at: place)
        return row
    }

    /// Removes the chatt with `id`, as another writer's `DELETE` would: its removal waits for the next tick, and
    /// nobody is told. False when no chatt has that id.
    @discardableResult
    public func remove(id: String) -> Bool {
        state.withLock { state in
            guard let index = state.rows.firstIndex(where: { $0.chatt.chatt.id == id }) else { return false }
            let removed = state.rows.remove(at: index).chatt
            state.lastSequence += 1
            let removal = RemovedChatt(
                sequence: state.lastSequence, id: id, position: removed.position, geodata: removed.chatt.geodata ?? "")
            state.removals.append((removal, nil))
            return true
        }
    }

    /// Removes the chatt with `id` as a batch of its own: the observers are told, then the call returns.
    public func remove(
        id: String, by moderator: String, reason: String, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> Bool {
        let observers = try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            return state.observers
        }
        guard remove(id: id) else { return false }
        state.withLock { $0.removedBy.append((moderator, reason)) }
        for observer in observers { observer() }
        return true
    }

    /// Chatts whose timestamp sorts before this one count as expired for `removeExpired` (its days aside).
    public var expiryCutoff: String {
        get { state.withLock { $0.expiryCutoff } }
        set { state.withLock { $0.expiryCutoff = newValue } }
    }

    /// Removes up to `batch` of the oldest chatts before `expiryCutoff`, as a batch of its own (observers told).
    public func removeExpired(
        olderThanDays days: Int, batch: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> Int {
        let (expired, observers) = try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            let cutoff = state.expiryCutoff
            let ids = state.rows.prefix { $0.chatt.chatt.timestamp < cutoff }.prefix(batch).map(\.chatt.chatt.id)
            return (ids, state.observers)
        }
        for id in expired {
            remove(id: id)
            state.withLock { $0.removedBy.append(("retention", "older than \(days) days")) }
        }
        if !expired.isEmpty { for observer in observers { observer() } }
        return expired.count
    }

    public func removedPlace(
        of id: String, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> FeedPosition? {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            return state.removals.first { $0.removal.id == id }?.removal.position
        }
    }

    /// Who removed chatts through `remove(id:by:reason:before:)`, and why, in order.
    public var removers: [(moderator: String, reason: String)] {
        state.withLock { $0.removedBy }
    }

    /// An operator's edit: the next tick is of a new epoch, as an UPDATE's would be.
    public func edit() {
        state.withLock { $0.epoch += 1 }
    }

    /// The store restored from a backup taken at tick `number`: later ticks are gone, and their chatts wait for
    /// the next tick, which reuses the next number under another token.
    public func restore(toTick number: Int64) {
        state.withLock { state in
            state.ticks.removeAll { $0.tick > number }
            for index in state.rows.indices where (state.rows[index].tick ?? 0) > number {
                state.rows[index].tick = nil
            }
            for index in state.removals.indices where (state.removals[index].tick ?? 0) > number {
                state.removals[index].tick = nil
            }
            state.restores += 1
        }
    }

    public func tick(before deadline: ContinuousClock.Instant) async throws(RepositoryError) -> LogTick {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            state.tickCalls += 1
            // Invariant: the store always has its first tick.
            let last = state.ticks.last!
            let fresh = state.rows.indices.filter { state.rows[$0].tick == nil }
            let removed = state.removals.indices.filter { state.removals[$0].tick == nil }
            guard !fresh.isEmpty || !removed.isEmpty || state.epoch != last.epoch else { return last }
            let number = last.tick + 1
            let tick = LogTick(tick: number, token: Self.token(of: number) &+ state.restores, epoch: state.epoch)
            for index in fresh { state.rows[index].tick = tick.tick }
            for index in removed { state.removals[index].tick = tick.tick }
            state.ticks.append(tick)
            return tick
        }
    }

    public func log(
        after position: LogPosition, limit: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> LogRead {
        try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            state.logReads += 1
            var ticks: [TickChatts] = []
            var rows = 0
            for tick in state.ticks where tick.tick >= position.tick {
                guard rows < limit else { return LogRead(ticks: ticks, isCut: true) }
                let after = { (sequence: Int64) in tick.tick > position.tick || sequence > position.seq }
                let chatts = state.rows.filter { $0.tick == tick.tick && after($0.chatt.sequence) }.map(\.chatt)
                let removals = state.removals.filter { $0.tick == tick.tick && after($0.removal.sequence) }
                let all = TickChatts(tick: tick, chatts: chatts.sorted { $0.sequence < $1.sequence },
                    removals: removals.map(\.removal))
                let events = all.events
                let taken = events.prefix(max(1, limit - rows))
                let last = taken.last?.sequence ?? .max
                ticks.append(all.through(tick.position(through: last)))
                rows += max(1, taken.count)
                if taken.count < events.count { return LogRead(ticks: ticks, isCut: true) }
            }
            return LogRead(ticks: ticks, isCut: rows >= limit)
        }
    }

    /// Every chatt `position` holds, counted as a full read; a held read waits at its gate after reading.
    public func readChatts(
        at position: LogPosition, before deadline: ContinuousClock.Instant, _ row: (SequencedChatt) -> Void
    ) async throws(RepositoryError) -> Bool {
        let (rows, gate) = try state.withLock { (state: inout State) throws(RepositoryError) in
            if let failure = state.failure { throw failure }
            state.fullReads += 1
            let gate = state.heldFullRead
            state.heldFullRead = nil
            guard state.ticks.contains(where: { $0.isTick(of: position) }) else {
                return ([SequencedChatt]?.none, gate)
            }
            let held = state.rows.filter { row in
                row.tick.map { position.holds(tick: $0, seq: row.chatt.sequence) } ?? false
            }
            return (held.map(\.chatt), gate)
        }
        await gate?.hold()
        guard let rows else { return false }
        rows.forEach(row)
        return true
    }

    /// Makes the next full read read the chatts, then wait until the gate is released before returning.
    public func holdNextFullRead() -> SnapshotGate {
        let gate = SnapshotGate()
        state.withLock { $0.heldFullRead = gate }
        return gate
    }

    /// The newest tick.
    public var newestTick: LogTick {
        state.withLock { $0.ticks.last! }
    }

    /// How many times the chatts were read in full, to show the feed cache at work.
    public var fullReads: Int {
        state.withLock { $0.fullReads }
    }

    /// How many times a tick was asked for: a database round trip each in a real store.
    public var tickCalls: Int {
        state.withLock { $0.tickCalls }
    }

    /// How many times the log was read after a position.
    public var logReads: Int {
        state.withLock { $0.logReads }
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
