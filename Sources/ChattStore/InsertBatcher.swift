import ChattModel
import Dispatch
import Locking

/// Group commit: concurrent inserts share one statement and one commit instead of paying a commit each.
///
/// Callers queue their chatt with a completion and return at once; nothing blocks a caller's thread. One writer
/// (a serial queue of its own) borrows a pooled connection, takes what is queued by then (at most
/// `maximumBatchSize`, oldest first), writes it in one round trip, and goes on with the next batch while another
/// queue announces the new rows to other processes (`ChattsChangedNotice`) on the batch's connection and then
/// completes the batch's inserts. So a lone post is written at once, with no timer, posts arriving while a batch
/// commits go together in the next one, and sequence numbers follow the queue order. Every insert of a batch gets
/// the same `ChattBatch`: the rows as stored. Completions run only after the commit (a 200 means stored) and after
/// the announcement, so another process can have heard of a chatt by the time its post is answered.
///
/// An insert still queued when the pool's acquire timeout has passed gives up with `.poolTimeout`, even while the
/// writer is stuck on a batch; past `maximumQueued` waiting inserts, a new one is refused at once (`.queueFull`).
final class InsertBatcher: Sendable {
    /// The most rows written in one statement.
    let maximumBatchSize: Int
    private let pool: PGConnectionPool
    /// Names this process in announcements, so that its own change listener can tell them from others' (empty: a
    /// name no listener is told to skip).
    let origin: String
    private let waitLimit: DispatchTimeInterval
    private let writer = DispatchQueue(label: "chatterd.insert-writer")
    private let announcer = DispatchQueue(label: "chatterd.insert-announcer")
    private let state: Locked<State>

    private struct State {
        var queue: InsertQueue<PendingInsert>
        /// Whether the writer is running (it stops when it finds the queue empty); at most one runs.
        var isWriting = false
        /// Whether a check for inserts past their deadline is scheduled; one is whenever any insert waits.
        var expiryScheduled = false
    }

    /// Creates a batcher writing through `pool`; an insert still queued after the pool's acquire timeout gives up.
    init(pool: PGConnectionPool, origin: String = "", maximumBatchSize: Int = 500, maximumQueued: Int = 4096) {
        precondition(maximumBatchSize > 0, "a batch holds at least one row")
        self.pool = pool
        self.origin = origin
        self.maximumBatchSize = maximumBatchSize
        waitLimit = pool.acquireTimeout
        state = Locked(State(queue: InsertQueue(capacity: maximumQueued)))
    }

    /// How many inserts are queued, not yet taken into a batch (the writer may be waiting for a connection).
    var queuedCount: Int {
        state.withLock { $0.queue.count }
    }

    /// Stores `chatt`; `completion` runs once the batch holding it has committed and been announced, or has
    /// failed: with the batch's stored rows, `.poolTimeout` when it waited longer than the pool's acquire timeout
    /// without being written, `.queueFull` (on the caller's thread) when too many inserts wait, any error
    /// borrowing a connection, or the error of its own row (`.connectionLost` when the outcome is unknown).
    func store(_ chatt: NewChatt, completion: @escaping @Sendable (Result<ChattBatch, StoreError>) -> Void) {
        let (accepted, startsWriter, expiryCheck) = state.withLock { state in
            let deadline = DispatchTime.now() + waitLimit
            guard state.queue.append(PendingInsert(chatt: chatt, complete: completion), deadline: deadline) else {
                return (false, false, DispatchTime?.none)
            }
            defer { state.isWriting = true; state.expiryScheduled = true }
            return (true, !state.isWriting, state.expiryScheduled ? nil : deadline)
        }
        guard accepted else { return completion(.failure(StoreError(.queueFull))) }
        if startsWriter { writer.async { self.writeQueuedBatches() } }
        if let expiryCheck { scheduleExpiryCheck(at: expiryCheck) }
    }

    /// Stores `chatt`, blocking until the batch holding it has committed or failed; returns the batch's stored rows.
    /// - Throws: as `store(_:completion:)` reports.
    func store(_ chatt: NewChatt) throws(StoreError) -> ChattBatch {
        let outcome = Locked<Result<ChattBatch, StoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        store(chatt) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    /// Stores `chatt`, blocking until the batch holding it has committed or failed.
    func insert(_ chatt: NewChatt) throws(StoreError) {
        _ = try store(chatt)
    }

    /// Writes batches until the queue is empty; runs on `writer`.
    private func writeQueuedBatches() {
        repeat {
            writeBatch()
        } while state.withLock { state in
            // Under the lock, so an insert queued now either is seen here or starts the writer again itself.
            state.isWriting = !state.queue.isEmpty
            return state.isWriting
        }
    }

    /// Writes one batch and hands it to `announcer`, which announces it, returns its connection to the pool and
    /// completes its inserts while the writer goes on.
    private func writeBatch() {
        let connection: PGConnection
        do {
            // The connection comes first: inserts arriving while the pool makes us wait join this batch.
            connection = try pool.checkOut()
        } catch {
            // No connection: everyone queued would wait for the same pool, so they all get this answer now.
            let everyone = state.withLock { $0.queue.removeAll() }
            for pending in everyone { pending.complete(.failure(error)) }
            return
        }
        let batch = state.withLock { $0.queue.take(maximumBatchSize) }
        guard !batch.isEmpty else { return pool.checkIn(connection) }
        let rows = ChattBatchInsert.write(batch.map(\.chatt), on: connection)
        let stored = ChattBatch(rows.compactMap { try? $0.get() })
        announcer.async { [origin, pool] in
            if !stored.chatts.isEmpty { ChattsChangedNotice.announce(origin: origin, on: connection) }
            pool.checkIn(connection)
            for (pending, row) in zip(batch, rows) { pending.complete(row.map { _ in stored }) }
        }
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

/// One queued insert and what to do with its outcome.
private struct PendingInsert: Sendable {
    let chatt: NewChatt
    let complete: @Sendable (Result<ChattBatch, StoreError>) -> Void
}
