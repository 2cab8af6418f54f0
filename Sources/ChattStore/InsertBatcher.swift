import ChattModel
import Locking
import TaskExecution

/// Group commit: concurrent inserts share one statement and one commit instead of paying a commit each, and
/// the next batch is sent while the last one's commit waits for the disk. Batches take no lock of one another's
/// (migrations/0006), so batches in flight share WAL flushes.
///
/// A shell around `BatchMachine`, which decides when a batch starts, what it takes and in what order batches are
/// answered; the batcher feeds it events on the store's loop, which alone touches it, and performs its actions
/// there, one after another: an event that arrives while actions are being performed (a connection granted at
/// once) waits for them. Callers queue their chatt with a completion and return at once; nothing blocks a thread.
/// A batch's write is a task on the loop that suspends while it waits for the database: it inserts every row in
/// one round trip (`ChattBatchInsert`), lets the next batch start as soon as its rows are in, and waits for its
/// commit. Once it has settled, the batcher says so once (`committed`) if any of it was stored or may have been,
/// then its inserts are completed, after every batch before it: a 200 means stored and the change log told.
///
/// An insert waits for a batch at most the pool's acquire timeout (`.poolTimeout`); past `maximumQueued` waiting
/// inserts a new one is refused at once (`.queueFull`). A batch gives up on the database (`.timedOut`, its outcome
/// unknown, so never retried) once its oldest insert has waited the acquire timeout and then the statement
/// timeout: a post is answered within both, even when a silent network partition keeps the server's own
/// statement timeout from reaching chatterd.
final class InsertBatcher: @unchecked Sendable {  // `machine` and `expiryTimer` only on the loop
    private typealias Machine = BatchMachine<PendingInsert, SettledBatch, PGConnection>

    /// What a batch has reached, for tests that hold one batch's commit while another commits.
    enum BatchEvent: Sendable, Equatable {
        /// The batch numbered so (counting from 0) has its rows inserted; its commit is on the way.
        case inserted(Int)
        /// The batch has committed (or failed); its inserts are completed once every batch before it is.
        case settled(Int)
    }

    let pool: PGConnectionPool
    /// Runs the batches' tasks on the store's loop, where the machine lives.
    private let executor: DispatchTaskExecutor
    private let observe: @Sendable (BatchEvent) -> Void
    private let committed = Locked<[@Sendable () -> Void]>([])
    private var machine: Machine
    private var expiryTimer: LoopTimers.ID?

    /// Creates a batcher writing through `pool`; an insert still queued after the pool's acquire timeout gives up.
    /// Up to `maximumInFlight` batches are in flight: four wrote 9–26 % more posts a second than two when commits
    /// wait for the disk (bench/RESULTS.md, "Batches in flight"). `observe` hears of each batch's progress.
    init(
        pool: PGConnectionPool, maximumBatchSize: Int = 500, maximumQueued: Int = 4096,
        maximumInFlight: Int = 4, observe: @escaping @Sendable (BatchEvent) -> Void = { _ in }
    ) {
        self.pool = pool
        self.observe = observe
        executor = DispatchTaskExecutor(queue: pool.loop.queue)
        machine = BatchMachine(
            maximumBatchSize: maximumBatchSize, maximumQueued: maximumQueued, maximumInFlight: maximumInFlight,
            waitLimit: pool.acquireTimeout, writeLimit: pool.statementTimeout)
    }

    /// Tells `observer`, on the store's loop, of each batch that stored something or may have (its outcome
    /// unknown), once, before any of its inserts is completed; as every observer added before.
    func observeCommits(_ observer: @escaping @Sendable () -> Void) {
        committed.withLock { $0.append(observer) }
    }

    /// Stores `chatt`; `completion` runs on the store's loop once the batch holding it has committed, and every
    /// batch before it has completed, or once it has failed: `.poolTimeout` when it waited
    /// longer than the pool's acquire timeout without being written, `.queueFull` when too many inserts wait, any
    /// error borrowing a connection, or the error of its own row (`.connectionLost` when the outcome is unknown).
    func store(_ chatt: NewChatt, completion: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
        pool.loop.queue.async { [self] in
            perform(machine.enqueue(PendingInsert(chatt: chatt, complete: completion), at: .now))
        }
    }

    /// Stores `chatt`, suspending until the batch holding it has committed or failed.
    /// - Throws: as `store(_:completion:)` reports.
    func store(_ chatt: NewChatt) async throws(StoreError) {
        try await withCheckedContinuation { continuation in
            store(chatt) { continuation.resume(returning: $0) }
        }.get()
    }

    /// Performs the machine's actions in order. None of them comes back into the machine before they are all done:
    /// the pool's grants, the batches' progress and the expiry timer each arrive later, as events of their own.
    private func perform(_ actions: [Machine.Action]) {
        for action in actions { run(action) }
    }

    private func run(_ action: Machine.Action) {
        switch action {
        case .refuse(let pending):
            pending.complete(.failure(StoreError(.queueFull)))
        case .leaseConnection:
            pool.lease(before: .now + pool.acquireTimeout) { [self] granted in
                switch granted {
                case .success(let connection): perform(machine.connectionGranted(connection))
                case .failure(let error): perform(machine.connectionRefused(error))
                }
            }
        case .write(let number, let inserts, let deadline, let connection):
            write(inserts, number, on: connection, before: deadline)
        case .returnConnection(let connection):
            pool.release(connection)
        case .fail(let inserts, let error):
            for pending in inserts { pending.complete(.failure(error)) }
        case .complete(let batches):
            for batch in batches { batch.complete() }
        case .armExpiry(let deadline):
            pool.loop.timers.cancel(expiryTimer)
            expiryTimer = pool.loop.timers.schedule(at: deadline) { [self] in
                expiryTimer = nil
                perform(machine.waitsExpired(at: .now))
            }
        case .cancelExpiry:
            pool.loop.timers.cancel(expiryTimer)
            expiryTimer = nil
        }
    }

    /// Writes batch `number` on `connection` and reports both steps to the machine.
    private func write(
        _ batch: [PendingInsert], _ number: Int, on connection: PGConnection, before deadline: ContinuousClock.Instant
    ) {
        Task(executorPreference: executor) { [self] in
            let session = PGSession(connection: connection, loop: pool.loop, deadline: deadline)
            let outcomes = await ChattBatchInsert.write(batch.map(\.chatt), in: session) { [self] in
                observe(.inserted(number))
                perform(machine.batchInserted(number))
            }
            pool.release(connection)
            if outcomes.contains(where: Self.mayHaveStored) { committed.withLock { $0 }.forEach { $0() } }
            observe(.settled(number))
            perform(machine.batchSettled(number, SettledBatch(inserts: batch, outcomes: outcomes)))
        }
    }

    /// Whether a row's outcome leaves it stored, or possibly stored: a lost connection or a deadline after the
    /// statement was sent.
    private static func mayHaveStored(_ outcome: Result<Void, StoreError>) -> Bool {
        switch outcome {
        case .success: true
        case .failure(let error): error.code == .connectionLost || error.code == .timedOut
        }
    }
}

/// A batch's inserts with their outcomes, waiting for the batches before it.
private struct SettledBatch: Sendable {
    let inserts: [PendingInsert]
    let outcomes: [Result<Void, StoreError>]

    func complete() {
        for (pending, outcome) in zip(inserts, outcomes) { pending.complete(outcome) }
    }
}

/// One queued insert and what to do with its outcome.
private struct PendingInsert: Sendable {
    let chatt: NewChatt
    let complete: @Sendable (Result<Void, StoreError>) -> Void
}
