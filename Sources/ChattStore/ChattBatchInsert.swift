import ChattModel

/// Writes a batch of chatts on one connection: a single INSERT of every row, so one round trip and one commit.
///
/// One statement over `unnest` of three arrays rather than libpq pipeline mode (one INSERT per row up to a single
/// sync): it stores more rows per second (measured: bench/RESULTS.md, "Batch insert"), and it leaves one result to
/// check instead of one per row.
enum ChattBatchInsert {
    /// All rows in one statement; ORDER BY the array position makes sequence numbers follow the batch order.
    static let batchStatement = PreparedStatement(
        name: "chatts_insert_batch",
        sql: """
            INSERT INTO chatts (name, message, geodata)
            SELECT name, message, geodata
            FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS batch(name, message, geodata, position)
            ORDER BY position
            """)
    /// One row, for retrying a refused batch row by row.
    static let rowStatement = PreparedStatement(
        name: "chatts_insert_row", sql: "INSERT INTO chatts (name, message, geodata) VALUES ($1, $2, $3)")

    /// Stores `chatts` in order and returns each one's outcome, in the same order.
    ///
    /// When the server refuses the batch because of a value (too long, bad encoding, NUL), nothing of it was
    /// stored, so the rows are retried one by one and only the bad ones fail. Any other failure is every row's:
    /// after a lost connection the outcome is unknown, and retrying could store a chatt twice.
    static func write(_ chatts: [NewChatt], on connection: PGConnection) -> [Result<Void, StoreError>] {
        let columns = [
            TextArrayLiteral.encode(chatts.map(\.name)),
            TextArrayLiteral.encode(chatts.map(\.message)),
            TextArrayLiteral.encode(chatts.map(\.geodata)),
        ]
        do {
            _ = try connection.query(batchStatement, columns)
            return Array(repeating: .success(()), count: chatts.count)
        } catch {
            guard chatts.count > 1, case .rejected = error.repositoryError else {
                return Array(repeating: .failure(error), count: chatts.count)
            }
            return writeOneByOne(chatts, on: connection)
        }
    }

    private static func writeOneByOne(_ chatts: [NewChatt], on connection: PGConnection) -> [Result<Void, StoreError>] {
        var lost: StoreError?
        return chatts.map { chatt in
            // Rows after a lost connection were never sent; they fail like the batch would have.
            if let lost { return .failure(lost) }
            do throws(StoreError) {
                _ = try connection.query(rowStatement, [chatt.name, chatt.message, chatt.geodata])
                return .success(())
            } catch {
                if error.code == .connectionLost { lost = error }
                return .failure(error)
            }
        }
    }
}
