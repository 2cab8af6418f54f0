import ChattModel
import Locking

/// Writes a batch of chatts on one connection: a single INSERT of every row, so one round trip and one commit.
///
/// One statement over `unnest` of three arrays rather than libpq pipeline mode (one INSERT per row up to a single
/// sync): it stores more rows per second (measured: bench/RESULTS.md, "Batch insert"), and it leaves one result to
/// check instead of one per row.
///
/// Each statement returns the rows as stored, in their wire forms, so the feeds (`ChattFeed`) can take them in
/// without reading them back; and each marks itself as announced by chatterd after it commits
/// (`ChattsChangedNotice`), so it holds no notify lock through its commit. The batch's announcement rides in the same round trip, after the
/// commit; rows stored one by one are announced once all are.
enum ChattBatchInsert {
    /// All rows in one statement; ORDER BY the array position makes sequence numbers follow the batch order.
    /// The statement numbers its rows itself (migrations/0005): it takes the batch's commit counters from the clock,
    /// whose row stays locked until the commit that follows in the same round trip, so the next batch's statement
    /// waits for this commit and numbers after it. Each row's counter is the clock before the batch plus its place.
    static let batchStatement = PreparedStatement(
        name: "chatts_insert_batch",
        sql: """
            WITH clock AS (
                UPDATE chatts_clock SET last = last + cardinality($1::text[])
                RETURNING epoch, last - cardinality($1::text[]) AS previous
            ), stored AS (
                INSERT INTO chatts (name, message, geodata, position)
                SELECT batch.name, batch.message, batch.geodata, clock.previous + batch.ordinal
                FROM clock, unnest($1::text[], $2::text[], $3::text[])
                    WITH ORDINALITY AS batch(name, message, geodata, ordinal)
                WHERE \(ChattsChangedNotice.announcesInsertCondition)
                ORDER BY batch.ordinal
                RETURNING \(ChattColumns.list)
            )
            SELECT stored.*, clock.epoch FROM stored CROSS JOIN clock
            """)
    /// One row, numbered as the batch's are, for retrying a refused batch row by row (sent unnamed: it is rare).
    static let rowStatement = PreparedStatement(
        name: "chatts_insert_row",
        sql: """
            WITH clock AS (
                UPDATE chatts_clock SET last = last + 1 RETURNING epoch, last
            ), stored AS (
                INSERT INTO chatts (name, message, geodata, position)
                SELECT $1::text, $2::text, $3::text, clock.last FROM clock
                WHERE \(ChattsChangedNotice.announcesInsertCondition)
                RETURNING \(ChattColumns.list)
            )
            SELECT stored.*, clock.epoch FROM stored CROSS JOIN clock
            """)

    /// What a write stored: each row's outcome, in the order given, and the epoch it was numbered in.
    struct Written {
        var outcomes: [Result<SequencedChatt, StoreError>]
        /// The clock's epoch at the (last) insert; 0 when nothing was stored.
        var epoch: Int64 = 0
    }

    /// Stores `chatts` in order, announces them as added by `origin`, and returns each one's outcome, the stored
    /// row on success, in the same order, with the epoch they were numbered in. `inserted` is told once, when every
    /// row that will be stored has its sequence number: as soon as the batch's rows are back, while its commit
    /// still waits for the disk (`CommittingQuery`), or when the batch has failed.
    ///
    /// When the server refuses the batch because of a value (too long, bad encoding, NUL), nothing of it was
    /// stored, so the rows are retried one by one and only the bad ones fail. Any other failure is every row's:
    /// after a lost connection (or the session's deadline) the outcome is unknown, and retrying could store a
    /// chatt twice.
    static func write(
        _ chatts: [NewChatt], announcingAs origin: String, in session: PGSession,
        inserted: @escaping @Sendable () -> Void
    ) async -> Written {
        let told = Locked(false)
        let tell: @Sendable () -> Void = {
            if told.withLock({ told in defer { told = true }; return !told }) { inserted() }
        }
        defer { tell() }
        let columns = [
            TextArrayLiteral.encode(chatts.map(\.name)),
            TextArrayLiteral.encode(chatts.map(\.message)),
            TextArrayLiteral.encode(chatts.map(\.geodata)),
        ]
        do throws(PipelineFailure) {
            let result = try await session.queryCommitting(
                batchStatement, columns, then: ChattsChangedNotice.announcement(origin: origin), executed: tell)
            do throws(StoreError) {
                let stored = try result.sequencedChatts()
                // RETURNING gives a row for each one inserted; a short answer would leave some posts without theirs.
                guard stored.count == chatts.count else { throw StoreError(.decodingFailed(column: "seq")) }
                let epoch = try result.epoch()
                return Written(outcomes: stored.sorted { $0.sequence < $1.sequence }.map { .success($0) }, epoch: epoch)
            } catch {
                return Written(outcomes: Array(repeating: .failure(error), count: chatts.count))
            }
        } catch {
            guard chatts.count > 1, !error.committing, case .rejected = error.error.repositoryError else {
                return Written(outcomes: Array(repeating: .failure(error.error), count: chatts.count))
            }
            let written = await writeOneByOne(chatts, in: session)
            if written.outcomes.contains(where: { (try? $0.get()) != nil }) {
                await ChattsChangedNotice.announce(origin: origin, in: session)
            }
            return written
        }
    }

    /// Each row in a transaction of its own, so others' commits may fall between them.
    private static func writeOneByOne(_ chatts: [NewChatt], in session: PGSession) async -> Written {
        var written = Written(outcomes: [])
        var lost: StoreError?
        for chatt in chatts {
            // Rows after a lost connection were never sent; they fail like the batch would have.
            if let lost {
                written.outcomes.append(.failure(lost))
                continue
            }
            do throws(StoreError) {
                let result = try await session.query(rowStatement.sql, [chatt.name, chatt.message, chatt.geodata])
                guard let row = try result.sequencedChatts().first else {
                    throw StoreError(.decodingFailed(column: "seq"))
                }
                written.epoch = try result.epoch()
                written.outcomes.append(.success(row))
            } catch {
                if error.code == .connectionLost || error.code == .timedOut { lost = error }
                written.outcomes.append(.failure(error))
            }
        }
        return written
    }
}
