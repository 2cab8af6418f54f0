/// The group commit's bookkeeping: which inserts wait and until when, when a batch starts, which batch is being
/// written, and in what order settled batches are answered. Pure: events in, actions out. The store's loop is its
/// only caller and performs what it returns (`InsertBatcher`), so tests drive it with made-up inserts and instants.
///
/// A batch starts when inserts wait, none is being written and fewer than `maximumInFlight` are in flight. It
/// first borrows a connection, so that inserts arriving meanwhile join it, then takes up to `maximumBatchSize` of
/// the oldest. Once its rows are inserted (its commit still on the way) the next batch may start; a batch that
/// settles without saying so (it failed first) is taken as inserted then. Settled batches are answered in the
/// order they were taken, so answers follow the order of the rows. The connection travels in the actions that use
/// it, so the shell keeps none.
///
/// An insert still queued `waitLimit` after it arrived gives up, even while every batch in flight is stuck. A
/// batch's write gives up `writeLimit` after its oldest insert's wait would have ended.
struct BatchMachine<Insert, Settled, Connection> {
    enum Action {
        /// Refuse the insert at once: too many wait.
        case refuse(Insert)
        /// Borrow a connection for the next batch, then report `connectionGranted` or `connectionRefused`.
        case leaseConnection
        /// Write the batch numbered so on `connection`, giving up at the deadline; report `batchInserted` once its
        /// rows are in and `batchSettled` once its outcome is known.
        case write(number: Int, inserts: [Insert], deadline: ContinuousClock.Instant, connection: Connection)
        /// Give back the connection: nothing is left to write.
        case returnConnection(Connection)
        /// Fail the inserts with the error.
        case fail([Insert], StoreError)
        /// Answer the settled batches, in this order.
        case complete([Settled])
        /// Report `waitsExpired` at the instant, replacing any earlier timer.
        case armExpiry(ContinuousClock.Instant)
        case cancelExpiry
    }

    /// The most rows written in one statement.
    let maximumBatchSize: Int
    /// The most batches in flight: one being written while the others commit.
    let maximumInFlight: Int
    /// How long an insert may wait to be taken into a batch.
    let waitLimit: Duration
    /// How long a batch's write may take once its oldest insert's wait is over.
    let writeLimit: Duration

    private var queue: InsertQueue<Insert>
    /// Whether a batch is between borrowing its connection and having its rows inserted; the next one waits.
    private(set) var isWriting = false
    /// The number of the batch being written, once it has its connection.
    private var writing: Int?
    private(set) var inFlight = 0
    private var order = InOrderRelease<Settled>()
    /// When the expiry timer fires; nil while none is armed.
    private var expiryArmedFor: ContinuousClock.Instant?

    init(
        maximumBatchSize: Int, maximumQueued: Int, maximumInFlight: Int, waitLimit: Duration, writeLimit: Duration
    ) {
        precondition(maximumBatchSize > 0, "a batch holds at least one row")
        precondition(maximumInFlight > 0, "at least one batch is written at a time")
        self.maximumBatchSize = maximumBatchSize
        self.maximumInFlight = maximumInFlight
        self.waitLimit = waitLimit
        self.writeLimit = writeLimit
        queue = InsertQueue(capacity: maximumQueued)
    }

    /// Inserts queued, not yet taken into a batch.
    var queuedCount: Int { queue.count }

    /// An insert arrives.
    mutating func enqueue(_ insert: Insert, at now: ContinuousClock.Instant) -> [Action] {
        let deadline = now + waitLimit
        guard queue.append(insert, deadline: deadline) else { return [.refuse(insert)] }
        var actions: [Action] = []
        if expiryArmedFor == nil {
            expiryArmedFor = deadline
            actions.append(.armExpiry(deadline))
        }
        return actions + startNextBatch()
    }

    /// The connection asked for by `.leaseConnection` is here.
    mutating func connectionGranted(_ connection: Connection) -> [Action] {
        guard let oldest = queue.nextDeadline else {
            // Every insert gave up while the batch waited for its connection.
            isWriting = false
            inFlight -= 1
            return [.returnConnection(connection)]
        }
        let inserts = queue.take(maximumBatchSize)
        let number = order.number()
        writing = number
        let write = Action.write(
            number: number, inserts: inserts, deadline: oldest + writeLimit, connection: connection)
        return [write] + disarmWhenEmpty()
    }

    /// No connection came: everyone queued would wait for the same pool, so they all get this answer now.
    mutating func connectionRefused(_ error: StoreError) -> [Action] {
        isWriting = false
        inFlight -= 1
        let everyone = queue.removeAll()
        return (everyone.isEmpty ? [] : [.fail(everyone, error)]) + disarmWhenEmpty()
    }

    /// Batch `number` has its rows in: the next one may start.
    mutating func batchInserted(_ number: Int) -> [Action] {
        guard writing == number else { return [] }
        writing = nil
        isWriting = false
        return startNextBatch()
    }

    /// Batch `number` has its outcome (its rows are in, or never will be): it is answered once every batch taken
    /// before it has been.
    mutating func batchSettled(_ number: Int, _ settled: Settled) -> [Action] {
        var actions = batchInserted(number)
        let released = order.finish(number, settled)
        inFlight -= 1
        if !released.isEmpty { actions.append(.complete(released)) }
        return actions + startNextBatch()
    }

    /// The expiry timer fired: inserts past their wait give up, and the timer is armed for the next one.
    mutating func waitsExpired(at now: ContinuousClock.Instant) -> [Action] {
        let overdue = queue.removeOverdue(at: now)
        expiryArmedFor = queue.nextDeadline
        var actions: [Action] = overdue.isEmpty ? [] : [.fail(overdue, StoreError(.poolTimeout))]
        if let next = expiryArmedFor { actions.append(.armExpiry(next)) }
        return actions
    }

    private mutating func startNextBatch() -> [Action] {
        guard !isWriting, !queue.isEmpty, inFlight < maximumInFlight else { return [] }
        isWriting = true
        inFlight += 1
        return [.leaseConnection]
    }

    private mutating func disarmWhenEmpty() -> [Action] {
        guard queue.isEmpty, expiryArmedFor != nil else { return [] }
        expiryArmedFor = nil
        return [.cancelExpiry]
    }
}

extension BatchMachine.Action: Equatable where Insert: Equatable, Settled: Equatable, Connection: Equatable {}
