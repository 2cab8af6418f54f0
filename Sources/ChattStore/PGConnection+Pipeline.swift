import CLibPQ

/// A statement in a transaction of its own, committed in the same round trip, whose rows come back before its
/// commit is flushed to disk, so that the caller can start its next transaction on another connection meanwhile.
///
/// libpq pipeline mode sends the statement, a flush request and a sync together: the server runs the
/// statement, flushes its rows at the flush request, and commits the implicit transaction at the sync
/// (PostgreSQL protocol, "Extended Query" and "Pipelining").
struct CommittingQuery: PGExchange {
    let statement: PreparedStatement
    let parameters: [String?]
    /// Told, on the store's loop, as soon as the statement's rows are back.
    let executed: @Sendable () -> Void
    private var reading = PipelineReading(queries: 1)

    init(_ statement: PreparedStatement, _ parameters: [String?], executed: @escaping @Sendable () -> Void) {
        self.statement = statement
        self.parameters = parameters
        self.executed = executed
    }

    /// The statement's rows once committed; else its failure, with `committing` telling whether the statement had
    /// run and only the commit failed. Nil while the exchange is not over.
    var outcome: Result<PGResult, PipelineFailure>? {
        reading.outcome
    }

    /// Whether the statement's rows had come back (an exchange that ends early then leaves the commit unknown).
    var isExecuted: Bool { reading.isExecuted }

    mutating func send(on connection: PGConnection) throws(StoreError) {
        reading = PipelineReading(queries: try connection.sendCommitting(statement, parameters))
    }

    mutating func receive(on connection: PGConnection) -> Bool {
        let wasExecuted = reading.isExecuted
        let over = connection.receive(into: &reading)
        if reading.isExecuted && !wasExecuted, case .success? = reading.rows { executed() }
        if over, reading.preparedFirst { connection.preparedNames.insert(statement.name) }
        return over
    }
}

/// A failure of a `CommittingQuery`, and whether it came at the commit, after the statement had run.
struct PipelineFailure: Error {
    let error: StoreError
    let committing: Bool
}

extension PGConnection {
    /// Queues, in pipeline mode, the statement's prepare (if this connection prepares and has not yet), the
    /// statement, a flush request and the sync.
    /// - Returns: how many statements were queued (results to read before the sync's).
    func sendCommitting(_ statement: PreparedStatement, _ parameters: [String?]) throws(StoreError) -> Int {
        try Self.refuseNUL(in: parameters)
        guard PQenterPipelineMode(handle) == 1 else { throw failureWithoutResult() }
        let preparing = preparesStatements && !preparedNames.contains(statement.name)
        let values = CStringArray(parameters)
        let count = Int32(parameters.count)
        let queued = values.withPointers { pointers in
            // A transaction-mode pooler gives each transaction whichever server connection is free, and a named
            // statement lives on the one that prepared it; an unnamed one is parsed, bound and run within the
            // transaction, wherever it runs.
            if !preparesStatements {
                return PQsendQueryParams(handle, statement.sql, count, nil, pointers, nil, nil, 0) == 1
            }
            if preparing, PQsendPrepare(handle, statement.name, statement.sql, 0, nil) != 1 { return false }
            return PQsendQueryPrepared(handle, statement.name, count, pointers, nil, nil, 0) == 1
        }
        guard queued, PQsendFlushRequest(handle) == 1, PQpipelineSync(handle) == 1 else {
            throw failureWithoutResult()
        }
        return preparing ? 2 : 1
    }

    /// Reads what has arrived of a pipeline and takes in every result; true once the last sync's has come (or
    /// the connection broke).
    func receive(into reading: inout PipelineReading) -> Bool {
        guard PQconsumeInput(handle) == 1 else {
            reading.broke(failureWithoutResult())
            return true
        }
        while !reading.isComplete, PQisBusy(handle) == 0 {
            guard let result = PQgetResult(handle) else {
                reading.take(.endOfQuery)
                continue
            }
            if PQresultStatus(result) == PGRES_PIPELINE_SYNC {
                PQclear(result)
                reading.take(.sync)
            } else {
                reading.take(.result(Result { () throws(StoreError) in try checked(result) }))
            }
        }
        return reading.isComplete
    }
}

/// The answers to a pipeline of statements and a sync, taken in as they come: which statement each result
/// belongs to (libpq ends each one's results with a NULL), the last statement's rows, and a failure at the
/// commit (a result between the last statement's and the sync's). Pure.
struct PipelineReading: Sendable {
    enum Piece {
        case result(Result<PGResult, StoreError>)
        case endOfQuery
        case sync
    }

    /// Statements before the sync.
    let queries: Int
    /// The statement whose results come now; `queries` once all have come.
    private var current = 0
    private var earlierFailure: StoreError?
    private(set) var rows: Result<PGResult, StoreError>?
    private var commitFailure: StoreError?
    private var brokenBy: StoreError?
    private(set) var isComplete = false

    init(queries: Int) {
        self.queries = queries
    }

    /// Whether the last statement's results are all in, so its commit is on its way.
    var isExecuted: Bool { current == queries }

    /// Whether the first of two statements (a prepare) succeeded.
    var preparedFirst: Bool { queries == 2 && current >= 1 && earlierFailure == nil }

    mutating func take(_ piece: Piece) {
        switch piece {
        case .sync:
            isComplete = true
        case .endOfQuery:
            if current < queries { current += 1 }
        case .result(let result):
            if current == queries - 1 {
                if case .failure? = rows {} else { rows = result }
            } else if current < queries - 1, case .failure(let error) = result {
                earlierFailure = earlierFailure ?? error
            } else if case .failure(let error) = result {
                commitFailure = commitFailure ?? error
            }
        }
    }

    /// The connection broke before the sync's result came.
    mutating func broke(_ error: StoreError) {
        guard !isComplete else { return }
        brokenBy = error
        isComplete = true
    }

    /// The outcome once complete: the rows, or the first failure and whether it came at the commit.
    var outcome: Result<PGResult, PipelineFailure>? {
        guard isComplete else { return nil }
        if let error = earlierFailure { return .failure(PipelineFailure(error: error, committing: false)) }
        if case .failure(let error)? = rows { return .failure(PipelineFailure(error: error, committing: false)) }
        if let error = commitFailure ?? brokenBy {
            return .failure(PipelineFailure(error: error, committing: isExecuted))
        }
        guard case .success(let result)? = rows else {
            return .failure(PipelineFailure(error: StoreError(.connectionLost), committing: false))
        }
        return .success(result)
    }
}
