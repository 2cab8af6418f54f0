import CLibPQ
@testable import ChattStore
import Testing

/// How a committing statement's answers are read: pure, with results made without a server.
@Suite struct PipelineReadingTests {
    private func rows() -> PGResult { PGResult(PQmakeEmptyPGresult(nil, PGRES_TUPLES_OK)) }

    @Test func theOutcomeIsKnownAtTheSync() throws {
        var reading = PipelineReading(queries: 1)
        reading.take(.result(.success(rows())))
        reading.take(.endOfQuery)
        #expect(reading.isExecuted && !reading.isComplete)
        reading.take(.sync)
        #expect(reading.isComplete)
        #expect(throws: Never.self) { try reading.outcome?.get() }
    }

    @Test func aConnectionLostBeforeTheCommitsSyncLeavesItUnknown() {
        var reading = PipelineReading(queries: 1)
        reading.take(.result(.success(rows())))
        reading.take(.endOfQuery)
        reading.broke(StoreError(.connectionLost))
        guard case .failure(let failure)? = reading.outcome else {
            Issue.record("a lost commit must fail")
            return
        }
        #expect(failure.error.code == .connectionLost && failure.committing)
    }

    @Test func aFailedCommitIsTheOutcome() {
        var reading = PipelineReading(queries: 1)
        reading.take(.result(.success(rows())))
        reading.take(.endOfQuery)
        reading.take(.result(.failure(StoreError(.queryFailed))))
        reading.take(.sync)
        guard case .failure(let failure)? = reading.outcome else {
            Issue.record("a failed commit must fail")
            return
        }
        #expect(failure.error.code == .queryFailed && failure.committing)
    }
}
