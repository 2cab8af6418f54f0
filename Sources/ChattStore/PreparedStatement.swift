import CLibPQ

/// A statement the server parses and plans once per connection, then runs by name.
struct PreparedStatement: Sendable {
    /// The session-wide name it is prepared under; one name per SQL text.
    let name: String
    /// The SQL, with `$1…` parameters sent as text.
    let sql: String
}

extension PGConnection {
    /// Runs `statement` with text parameters, preparing it first if this connection has not yet; on a connection
    /// that does not prepare statements, sends it unnamed like `query(_:_:)`.
    /// - Throws: as `query(_:_:)`.
    func query(_ statement: PreparedStatement, _ parameters: [String?]) throws(StoreError) -> PGResult {
        // A transaction-mode pooler gives each transaction whichever server connection is free, and a named
        // statement lives on the one that prepared it. An unnamed statement is parsed, bound and run in one
        // round trip, and so within one transaction, wherever it runs.
        guard preparesStatements else { return try query(statement.sql, parameters) }
        try Self.refuseNUL(in: parameters)
        if !preparedNames.contains(statement.name) {
            _ = try checked(PQprepare(handle, statement.name, statement.sql, 0, nil))
            preparedNames.insert(statement.name)
        }
        let values = CStringArray(parameters)
        let result = values.withPointers { pointers in
            PQexecPrepared(handle, statement.name, Int32(pointers.count), pointers, nil, nil, 0)
        }
        return try checked(result)
    }
}
