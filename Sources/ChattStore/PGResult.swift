import CLibPQ

/// A query result in text format; owns its `PGresult` and clears it on deinit.
// @unchecked Sendable: a PGresult is read-only once made, and libpq lets it be read from any thread.
public final class PGResult: @unchecked Sendable {
    private let handle: OpaquePointer

    /// Takes ownership of `handle`.
    init(_ handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    /// libpq's status for the command.
    var status: ExecStatusType {
        PQresultStatus(handle)
    }

    /// The SQLSTATE of an error result, if the server sent one.
    var sqlState: String? {
        errorField("C")  // PG_DIAG_SQLSTATE
    }

    /// The server's primary error message, if any.
    var primaryMessage: String? {
        errorField("M")  // PG_DIAG_MESSAGE_PRIMARY
    }

    /// The number of rows returned.
    public var rowCount: Int {
        Int(PQntuples(handle))
    }

    /// What the command tag counts (`INSERT 0 n`: n), as libpq gives it: empty for a command that counts nothing.
    var commandTuples: String {
        String(cString: PQcmdTuples(handle))
    }

    /// The index of the column called `name`, to be resolved once and reused for every row.
    /// - Throws: `.decodingFailed(column:)` when the result has no such column.
    public func columnIndex(named name: String) throws(StoreError) -> Int {
        // PQfnumber folds unquoted names to lower case, as SQL does; our column names are lower case.
        let index = PQfnumber(handle, name)
        guard index >= 0 else { throw StoreError(.decodingFailed(column: name)) }
        return Int(index)
    }

    /// The text of the value at (`row`, `column`), or nil when it is SQL NULL.
    public func string(row: Int, column: Int) -> String? {
        let (row32, column32) = (Int32(row), Int32(column))
        guard PQgetisnull(handle, row32, column32) == 0 else { return nil }
        // Use the length libpq reports rather than scanning for a terminator.
        let length = Int(PQgetlength(handle, row32, column32))
        guard let value = PQgetvalue(handle, row32, column32) else { return "" }
        let bytes = UnsafeRawBufferPointer(start: value, count: length)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The text of a value that must not be NULL.
    /// - Throws: `.decodingFailed(column:)` naming `name` when it is NULL.
    public func requiredString(row: Int, column: Int, name: String) throws(StoreError) -> String {
        guard let value = string(row: row, column: column) else {
            throw StoreError(.decodingFailed(column: name))
        }
        return value
    }

    /// - Parameter field: the `PG_DIAG_*` code, which Swift cannot import because it is a character macro.
    private func errorField(_ field: Unicode.Scalar) -> String? {
        PQresultErrorField(handle, Int32(field.value)).map { String(cString: $0) }
    }
}
