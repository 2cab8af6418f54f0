import CLibPQ

extension PGConnection {
    /// Runs `statement` in a transaction of its own and commits it, in one round trip, telling `executed` as soon
    /// as the statement's rows are back, while the commit still waits for the disk.
    ///
    /// libpq pipeline mode sends the statement, a flush request and a sync together: the server runs the
    /// statement, flushes its rows at the flush request, and commits the implicit transaction at the sync
    /// (PostgreSQL protocol, "Extended Query" and "Pipelining"). So a caller can start its next transaction on
    /// another connection while this one's commit record is flushed.
    /// - Returns: the statement's rows, once committed.
    /// - Throws: as `query(_:_:)`, with `committing` telling whether the statement itself succeeded and only the
    ///   commit failed (then `.connectionLost` leaves the outcome unknown).
    func queryCommitting(
        _ statement: PreparedStatement, _ parameters: [String?], executed: () -> Void
    ) throws(PipelineFailure) -> PGResult {
        do throws(StoreError) {
            try Self.refuseNUL(in: parameters)
        } catch {
            throw PipelineFailure(error: error, committing: false)
        }
        guard PQenterPipelineMode(handle) == 1 else {
            throw PipelineFailure(error: failureWithoutResult(), committing: false)
        }
        // Fails only with results left unread, when the connection is broken: isReusable then drops it.
        defer { _ = PQexitPipelineMode(handle) }
        let preparing = preparesStatements && !preparedNames.contains(statement.name)
        let sent = sendPipeline(statement, parameters, preparing: preparing)
        guard sent else { throw PipelineFailure(error: failureWithoutResult(), committing: false) }
        var rows: PGResult?
        do throws(StoreError) {
            if preparing {
                _ = try checked(nextPipelineResult())
                preparedNames.insert(statement.name)
            }
            rows = try checked(nextPipelineResult())
            executed()
        } catch {
            drainPipeline()
            throw PipelineFailure(error: error, committing: false)
        }
        do throws(StoreError) {
            try awaitSync()
        } catch {
            throw PipelineFailure(error: error, committing: true)
        }
        return rows!
    }

    /// Queues the prepare (if `preparing`), the statement, a flush request and the sync, and sends them.
    private func sendPipeline(_ statement: PreparedStatement, _ parameters: [String?], preparing: Bool) -> Bool {
        let values = CStringArray(parameters)
        let count = Int32(parameters.count)
        let queued = values.withPointers { pointers in
            if !preparesStatements {
                return PQsendQueryParams(handle, statement.sql, count, nil, pointers, nil, nil, 0) == 1
            }
            if preparing, PQsendPrepare(handle, statement.name, statement.sql, 0, nil) != 1 { return false }
            return PQsendQueryPrepared(handle, statement.name, count, pointers, nil, nil, 0) == 1
        }
        return queued && PQsendFlushRequest(handle) == 1 && PQpipelineSync(handle) == 1
    }

    /// The next query's result, and the NULL that ends it.
    private func nextPipelineResult() -> OpaquePointer? {
        let result = PQgetResult(handle)
        if result != nil { _ = PQgetResult(handle) }
        return result
    }

    /// Reads up to the sync's result; throws the first error on the way (a commit that failed).
    private func awaitSync() throws(StoreError) {
        var failure: StoreError?
        while true {
            guard let result = PQgetResult(handle) else {
                // NULL ends a query's results; with a broken connection nothing more will come.
                if PQstatus(handle) != CONNECTION_OK { throw failure ?? failureWithoutResult() }
                continue
            }
            if PQresultStatus(result) == PGRES_PIPELINE_SYNC {
                PQclear(result)
                if let failure { throw failure }
                return
            }
            do throws(StoreError) {
                _ = try checked(result)
            } catch {
                failure = failure ?? error
            }
        }
    }

    /// After a failed statement: reads the rest of the pipeline (the server skips to the sync), so the connection
    /// leaves pipeline mode fit for the next caller when only the statement failed.
    private func drainPipeline() {
        while PQstatus(handle) == CONNECTION_OK {
            guard let result = PQgetResult(handle) else { continue }
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { return }
        }
    }
}

/// A failure of `queryCommitting`, and whether it came at the commit, after the statement had run.
struct PipelineFailure: Error {
    let error: StoreError
    let committing: Bool
}
