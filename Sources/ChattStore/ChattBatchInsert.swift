import ChattModel

/// Writes a batch of chatts on one connection: a single INSERT of every row, so one round trip and one commit.
///
/// One statement over `unnest` of three arrays rather than libpq pipeline mode (one INSERT per row up to a single
/// sync): it stores more rows per second (measured: bench/RESULTS.md, "Batch insert"), and it leaves one result to
/// check instead of one per row. It takes no lock but the row locks of its own inserts: each row records its
/// transaction (`xid`, migrations/0006), and the change log finds it by that after the commit, so nothing is
/// returned and nothing orders one batch's commit after another's.
///
/// Each statement marks itself as chatterd's (`ChattsChangedNotice`), so that migration 0004's trigger does not notify
/// inside its transaction, which would hold the server's notify lock through its commit: the tick of the change log
/// that takes the rows in is announced instead.
enum ChattBatchInsert {
    /// All rows in one statement; ORDER BY the array position makes sequence numbers follow the batch order.
    static let batchStatement = PreparedStatement(
        name: "chatts_insert_batch",
        sql: """
            INSERT INTO chatts (name, message, geodata)
            SELECT name, message, geodata
            FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS batch(name, message, geodata, ordinal)
            WHERE \(ChattsChangedNotice.announcesInsertCondition)
            ORDER BY ordinal
            """)
    /// One row, for retrying a refused batch row by row (sent unnamed: it is rare).
    static let rowStatement = PreparedStatement(
        name: "chatts_insert_row",
        sql: """
            INSERT INTO chatts (name, message, geodata)
            SELECT $1::text, $2::text, $3::text WHERE \(ChattsChangedNotice.announcesInsertCondition)
            """)

    /// Stores `chatts` in order, and returns each one's outcome, in the same order. `rowsIn` is told as soon as the
    /// batch's rows are in, while its commit still waits for the disk (`CommittingQuery`); a batch that fails before
    /// that never tells it.
    ///
    /// When the server refuses the batch because of a value (too long, bad encoding, NUL), nothing of it was
    /// stored, so the rows are retried one by one and only the bad ones fail. Any other failure is every row's:
    /// after a lost connection (or the session's deadline) the outcome is unknown, and retrying could store a
    /// chatt twice.
    static func write(
        _ chatts: [NewChatt], in session: PGSession, rowsIn: @escaping @Sendable () -> Void
    ) async -> [Result<Void, StoreError>] {
        let columns = [
            TextArrayLiteral.encode(chatts.map(\.name)),
            TextArrayLiteral.encode(chatts.map(\.message)),
            TextArrayLiteral.encode(chatts.map(\.geodata)),
        ]
        do throws(PipelineFailure) {
            let result = try await session.queryCommitting(batchStatement, columns, executed: rowsIn)
            // The command tag counts the rows inserted; a short count would leave some posts unstored.
            guard result.rowsAffected == chatts.count else {
                return Array(repeating: .failure(StoreError(.decodingFailed(column: "seq"))), count: chatts.count)
            }
            return Array(repeating: .success(()), count: chatts.count)
        } catch {
            guard chatts.count > 1, !error.committing, case .rejected = error.error.repositoryError else {
                return Array(repeating: .failure(error.error), count: chatts.count)
            }
            return await writeOneByOne(chatts, in: session)
        }
    }

    /// Each row in a transaction of its own, so others' commits may fall between them.
    private static func writeOneByOne(_ chatts: [NewChatt], in session: PGSession) async -> [Result<Void, StoreError>] {
        var outcomes: [Result<Void, StoreError>] = []
        var lost: StoreError?
        for chatt in chatts {
            // Rows after a lost connection were never sent; they fail like the batch would have.
            if let lost {
                outcomes.append(.failure(lost))
                continue
            }
            do throws(StoreError) {
                let result = try await session.query(rowStatement.sql, [chatt.name, chatt.message, chatt.geodata])
                guard result.rowsAffected == 1 else { throw StoreError(.decodingFailed(column: "seq")) }
                outcomes.append(.success(()))
            } catch {
                if error.code == .connectionLost || error.code == .timedOut { lost = error }
                outcomes.append(.failure(error))
            }
        }
        return outcomes
    }
}
