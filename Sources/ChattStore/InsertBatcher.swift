import ChattModel
import Dispatch
import Locking
import TaskExecution

/// Group commit: concurrent inserts share one statement and one commit instead of paying a commit each, and
/// the next batch is written while the last one's commit waits for the disk, so their WAL flushes overlap.
///
/// Callers queue their chatt with a completion and return at once; nothing blocks a caller's thread, nor any
/// other: a batch is a task that suspends while it waits for the database (`PGSession`). It borrows a pooled
/// connection, takes what is queued by then (at most `maximumBatchSize`, oldest first) and writes it in one round
/// trip (`ChattBatchInsert`). As soon as its rows are back, and its commit is still on the way, the next batch may
/// start on another connection: up to `maximumInFlight` batches are in flight, but only one at a time is being
/// written, so batches insert, and number their rows, in queue order. After its commit a batch announces its rows to other processes
/// (`ChattsChangedNotice`) on its connection; then its inserts are completed, in batch order: a batch that
/// committed before the one ahead of it waits for it, so answers, and the feed cache's appends, follow the
/// order of the rows. A lone post is written at once, with no timer. Every insert of a batch gets the same
/// `ChattBatch`: the rows as stored. Completions run only after the commit (a 200 means stored) and after the
/// announcement, so another process can have heard of a chatt by the time its post is answered.
///
/// An insert still queued when the pool's acquire timeout has passed gives up with `.poolTimeout`, even while
/// every batch in flight is stuck; past `maximumQueued` waiting inserts, a new one is refused at once
/// (`.queueFull`). A batch gives up on the database (`.timedOut`, its outcome unknown, so never retried) once its
/// oldest insert has waited the acquire timeout and then the statement timeout: a post is answered within both,
/// even when a silent network partition keeps the server's own statement timeout from reaching chatterd.
final class InsertBatcher: Sendable {
    /// What a batch has reached, for tests that hold one batch's commit while another commits.
    enum BatchEvent: Sendable, Equatable {
        /// The batch numbered so (counting from 0) has its rows inserted; its commit is on the way.
        case inserted(Int)
        /// The batch has committed (or failed); its inserts are completed once every batch before it is.
        case settled(Int)
    }

    /// The most rows written in one statement.
    let maximumBatchSize: Int
    /// The most batches in flight: one being written while the others commit. Four wrote 9–26 % more posts a
    /// second than two when commits wait for the disk (bench/RESULTS.md, "Batches in flight").
    let maximumInFlight: Int
    private let pool: PGConnectionPool
    /// Names this process in announcements, so that its own change listener can tell them from others' (empty: a
    /// name no listener is told to skip).
    let origin: String
    private let waitLimit: DispatchTimeInterval
    /// How long a batch may take once its oldest insert has waited `waitLimit`.
    private let writeLimit: DispatchTimeInterval
    /// Runs the batches' tasks on the store's loop: their work between waits is short, a batch's next step then
    /// never waits behind the readers' work on Dispatch's shared queues, and batches settle one at a time.
    private let executor: DispatchTaskExecutor
    private let observe: @Sendable (BatchEvent) -> Void
    private let state: Locked<State>

    fileprivate struct State {
        var queue: InsertQueue<PendingInsert>
        /// Whether a batch is between borrowing its connection and having its rows inserted; the next one waits.
        var isWriting = false
        var inFlight = 0
        var order = InOrderRelease<SettledBatch>()
        /// Whether a check for inserts past their deadline is scheduled; one is whenever any insert waits.
        var expiryScheduled = false
    }

    /// Creates a batcher writing through `pool`; an insert still queued after the pool's acquire timeout gives up.
    /// `observe` hears of each batch's progress.
    init(
        pool: PGConnectionPool, origin: String = "", maximumBatchSize: Int = 500, maximumQueued: Int = 4096,
        maximumInFlight: Int = 4, observe: @escaping @Sendable (BatchEvent) -> Void = { _ in }
    ) {
        precondition(maximumBatchSize > 0, "a batch holds at least one row")
        precondition(maximumInFlight > 0, "at least one batch is written at a time")
        self.pool = pool
        self.origin = origin
        self.maximumBatchSize = maximumBatchSize
        self.maximumInFlight = maximumInFlight
        self.observe = observe
        waitLimit = PGConnectionPool.interval(pool.acquireTimeout)
        writeLimit = pool.statementTimeout
        executor = DispatchTaskExecutor(queue: pool.loop.queue)
        state = Locked(State(queue: InsertQueue(capacity: maximumQueued)))
    }

    /// Stores `chatt`; `completion` runs once the batch holding it has committed and been announced, and every
    /// batch before it has completed, or once it has failed: with the batch's stored rows, `.poolTimeout` when it
    /// waited longer than the pool's acquire timeout without being written, `.queueFull` (on the caller's thread)
    /// when too many inserts wait, any error borrowing a connection, or the error of its own row
    /// (`.connectionLost` when the outcome is unknown).
    func store(_ chatt: NewChatt, completion: @escaping @Sendable (Result<ChattBatch, StoreError>) -> Void) {
        let (accepted, startsBatch, expiryCheck) = state.withLock { state in
            let deadline = DispatchTime.now() + waitLimit
            guard state.queue.append(PendingInsert(chatt: chatt, complete: completion), deadline: deadline) else {
                return (false, false, DispatchTime?.none)
            }
            defer { state.expiryScheduled = true }
            return (true, state.startsNextBatch(maximumInFlight), state.expiryScheduled ? nil : deadline)
        }
        guard accepted else { return completion(.failure(StoreError(.queueFull))) }
        if startsBatch { startBatch() }
        if let expiryCheck { scheduleExpiryCheck(at: expiryCheck) }
    }

    /// Stores `chatt`, suspending until the batch holding it has committed or failed; returns the batch's stored
    /// rows.
    /// - Throws: as `store(_:completion:)` reports.
    func store(_ chatt: NewChatt) async throws(StoreError) -> ChattBatch {
        let outcome = await withCheckedContinuation { continuation in
            store(chatt) { continuation.resume(returning: $0) }
        }
        return try outcome.get()
    }

    private func startBatch() {
        Task(executorPreference: executor) { await self.writeBatch() }
    }

    /// Writes one batch: borrows a connection, takes the batch, inserts it (letting the next batch start once its
    /// rows are in), waits for its commit, announces it and settles it.
    private func writeBatch() async {
        let connection: PGConnection
        do throws(StoreError) {
            // The connection comes first: inserts arriving while the pool makes us wait join this batch.
            connection = try await pool.checkOut(before: .now + pool.acquireTimeout)
        } catch {
            // No connection: everyone queued would wait for the same pool, so they all get this answer now.
            let everyone = state.withLock { $0.queue.removeAll() }
            for pending in everyone { pending.complete(.failure(error)) }
            return writingEnded(batchEnded: true)
        }
        let taken = state.withLock { state -> (batch: [PendingInsert], number: Int, deadline: DispatchTime)? in
            guard let oldest = state.queue.nextDeadline else { return nil }
            return (state.queue.take(maximumBatchSize), state.order.number(), oldest + writeLimit)
        }
        guard let (batch, number, deadline) = taken else {
            pool.checkIn(connection)
            return writingEnded(batchEnded: true)
        }
        let session = PGSession(connection: connection, loop: pool.loop, deadline: deadline)
        let rows = await ChattBatchInsert.write(batch.map(\.chatt), in: session) { [self] in
            observe(.inserted(number))
            writingEnded(batchEnded: false)
        }
        let stored = ChattBatch(rows.compactMap { try? $0.get() })
        if !stored.chatts.isEmpty { await ChattsChangedNotice.announce(origin: origin, in: session) }
        pool.checkIn(connection)
        observe(.settled(number))
        settle(SettledBatch(inserts: batch, outcomes: rows.map { $0.map { _ in stored } }), number)
    }

    /// The batch being written has its rows in, or never got any (`batchEnded`): the next may start.
    private func writingEnded(batchEnded: Bool) {
        let startsNext = state.withLock { state in
            state.isWriting = false
            if batchEnded { state.inFlight -= 1 }
            return state.startsNextBatch(maximumInFlight)
        }
        if startsNext { startBatch() }
    }

    /// Completes `batch`, numbered `number`, and every batch after it that was waiting for it, in order. Runs on
    /// the loop (the batches' executor), so no other batch settles meanwhile.
    private func settle(_ batch: SettledBatch, _ number: Int) {
        let (released, startsNext) = state.withLock { state in
            let released = state.order.finish(number, batch)
            state.inFlight -= 1
            return (released, state.startsNextBatch(maximumInFlight))
        }
        for batch in released { batch.complete() }
        if startsNext { startBatch() }
    }

    private func scheduleExpiryCheck(at deadline: DispatchTime) {
        DispatchQueue.global().asyncAfter(deadline: deadline) { self.expireOverdueInserts() }
    }

    /// Fails the inserts queued past their deadline and schedules the next check while any insert waits.
    private func expireOverdueInserts() {
        let (overdue, nextCheck) = state.withLock { state in
            let overdue = state.queue.removeOverdue(at: .now())
            let next = state.queue.nextDeadline
            state.expiryScheduled = next != nil
            return (overdue, next)
        }
        if let nextCheck { scheduleExpiryCheck(at: nextCheck) }
        for pending in overdue { pending.complete(.failure(StoreError(.poolTimeout))) }
    }
}

extension InsertBatcher.State {
    /// Whether the next batch starts now (then counted in): inserts wait, no batch is being written, and fewer
    /// than `maximumInFlight` are in flight.
    fileprivate mutating func startsNextBatch(_ maximumInFlight: Int) -> Bool {
        guard !isWriting, !queue.isEmpty, inFlight < maximumInFlight else { return false }
        isWriting = true
        inFlight += 1
        return true
    }
}

/// A batch's inserts with their outcomes, waiting for the batches before it.
private struct SettledBatch: Sendable {
    let inserts: [PendingInsert]
    let outcomes: [Result<ChattBatch, StoreError>]

    func complete() {
        for (pending, outcome) in zip(inserts, outcomes) { pending.complete(outcome) }
    }
}

/// One queued insert and what to do with its outcome.
private struct PendingInsert: Sendable {
    let chatt: NewChatt
    let complete: @Sendable (Result<ChattBatch, StoreError>) -> Void
}
