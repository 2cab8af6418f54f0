import ChattModel
import Dispatch
import Locking

/// Group commit: concurrent inserts share one statement and one commit instead of paying a commit each.
///
/// Callers queue their chatt and block. A caller that finds nobody writing becomes the leader: it borrows a pooled
/// connection, takes what is queued by then (at most `maximumBatchSize`, oldest first), writes it in one round trip,
/// wakes every waiter with its own outcome, and hands the lead to the oldest caller still queued. So a lone post is
/// written at once, with no timer, and posts arriving while a batch commits go together in the next one; sequence
/// numbers follow the queue order. Every post of a batch gets the same `ChattBatch` back: the rows as stored.
///
/// Before it wakes a batch's posts, the leader announces the new rows to other processes (`ChattsChangedNotice`),
/// on the connection it still holds, so that another process can have heard of a chatt by the time its post is
/// answered, as when the trigger announced it inside the insert. The next leader is already writing meanwhile,
/// and the announcement waits for no WAL flush: it costs each post one round trip, and no batch another's flush.
final class InsertBatcher: Sendable {
    /// The most rows written in one statement.
    let maximumBatchSize: Int
    private let pool: PGConnectionPool
    /// Names this process in announcements, so that its own change listener can tell them from others' (empty: a
    /// name no listener is told to skip).
    let origin: String
    private let waitLimit: DispatchTimeInterval
    private let state = Locked(State())

    private struct State {
        var queue: [Waiter] = []
        /// Whether a caller is leading (writing, or promoted and about to wake); at most one is.
        var hasLeader = false
    }

    /// Creates a batcher writing through `pool`; a caller still queued after the pool's acquire timeout gives up.
    init(pool: PGConnectionPool, origin: String = "", maximumBatchSize: Int = 500) {
        precondition(maximumBatchSize > 0, "a batch holds at least one row")
        self.pool = pool
        self.origin = origin
        self.maximumBatchSize = maximumBatchSize
        waitLimit = pool.acquireTimeout
    }

    /// How many inserts are queued, including a leader still waiting for its connection.
    var queuedCount: Int {
        state.withLock { $0.queue.count }
    }

    /// Stores `chatt`, blocking until the batch holding it has committed or failed.
    /// - Throws: as `store(_:)`.
    func insert(_ chatt: NewChatt) throws(StoreError) {
        _ = try store(chatt)
    }

    /// Stores `chatt`, blocking until the batch holding it has committed or failed; returns the batch's stored rows.
    /// - Throws: `.poolTimeout` when it waited longer than the pool's acquire timeout without being written, any
    ///   error borrowing a connection, or the error of its own row (`.connectionLost` when the outcome is unknown).
    func store(_ chatt: NewChatt) throws(StoreError) -> ChattBatch {
        let waiter = Waiter(chatt)
        let leads = state.withLock { state in
            state.queue.append(waiter)
            guard !state.hasLeader else { return false }
            state.hasLeader = true
            waiter.stage = .leading
            return true
        }
        if leads || awaitTurn(of: waiter).isLeading {
            lead()
        }
        return try state.withLock { _ in waiter.stage }.outcome.get()
    }

    /// Waits until `waiter` is promoted to leader or has its outcome; gives up if still queued at the wait limit.
    private func awaitTurn(of waiter: Waiter) -> Waiter.Stage {
        if waiter.wakeUp.wait(timeout: .now() + waitLimit) == .timedOut {
            let gaveUp = state.withLock { state in
                guard case .queued = waiter.stage else { return false }
                state.queue.removeAll { $0 === waiter }
                waiter.stage = .done(.failure(StoreError(.poolTimeout)))
                return true
            }
            // Otherwise it was taken into a batch, or promoted, meanwhile: that answer is already on its way.
            if !gaveUp { waiter.wakeUp.wait() }
        }
        return state.withLock { _ in waiter.stage }
    }

    /// Writes one batch as leader, passes the lead on, announces what it stored, and answers the batch's posts.
    private func lead() {
        var batch: [Waiter] = []
        do {
            // The connection comes first: posts arriving while the pool makes us wait join this batch.
            try pool.withConnection { connection throws(StoreError) in
                batch = takeBatch()
                let rows = ChattBatchInsert.write(batch.map(\.chatt), on: connection)
                let stored = ChattBatch(rows.compactMap { try? $0.get() })
                finish(batch, with: rows.map { row in row.map { _ in stored } }) {
                    if !stored.chatts.isEmpty { ChattsChangedNotice.announce(origin: origin, on: connection) }
                }
            }
        } catch {
            // Only borrowing throws. No connection: everyone queued would wait for the same pool, so they all get
            // this answer now.
            batch = state.withLock { state in
                defer { state.queue = [] }
                return state.queue
            }
            finish(batch, with: Array(repeating: .failure(error), count: batch.count))
        }
    }

    /// The oldest queued inserts. The leader's own is among them: it was alone when it arrived, or the oldest
    /// when promoted, and only plain queued waiters ever leave the queue early.
    private func takeBatch() -> [Waiter] {
        state.withLock { state in
            let batch = Array(state.queue.prefix(maximumBatchSize))
            state.queue.removeFirst(batch.count)
            for waiter in batch { waiter.stage = .writing }
            return batch
        }
    }

    /// Records each outcome and passes the lead to the oldest queued caller, if any, then runs `beforeWaking` and
    /// wakes the batch's callers.
    private func finish(
        _ batch: [Waiter], with outcomes: [Result<ChattBatch, StoreError>], beforeWaking: () -> Void = {}
    ) {
        let successor = state.withLock { state -> Waiter? in
            for (waiter, outcome) in zip(batch, outcomes) { waiter.stage = .done(outcome) }
            guard let next = state.queue.first else {
                state.hasLeader = false
                return nil
            }
            next.stage = .leading
            return next
        }
        // The successor first: its batch goes out while the others are still being woken.
        successor?.wakeUp.signal()
        beforeWaking()
        for waiter in batch { waiter.wakeUp.signal() }
    }
}

/// One queued insert and the semaphore its caller sleeps on.
// @unchecked Sendable: `stage` is only read or written while holding the batcher's lock.
private final class Waiter: @unchecked Sendable {
    enum Stage {
        case queued, leading, writing
        case done(Result<ChattBatch, StoreError>)

        var isLeading: Bool {
            if case .leading = self { return true }
            return false
        }

        /// The caller's answer; only meaningful once done.
        var outcome: Result<ChattBatch, StoreError> {
            if case .done(let outcome) = self { return outcome }
            preconditionFailure("an insert returned before its batch finished")
        }
    }

    let chatt: NewChatt
    let wakeUp = DispatchSemaphore(value: 0)
    var stage = Stage.queued

    init(_ chatt: NewChatt) {
        self.chatt = chatt
    }
}
