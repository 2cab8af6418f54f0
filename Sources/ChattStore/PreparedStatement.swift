/// A statement the server parses and plans once per connection, then runs by name (`CommittingQuery`).
struct PreparedStatement: Sendable {
    /// The session-wide name it is prepared under; one name per SQL text.
    let name: String
    /// The SQL, with `$1…` parameters sent as text.
    let sql: String
}
