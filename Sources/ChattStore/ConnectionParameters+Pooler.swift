import CLibPQ

/// Connecting through a pooler that refuses chatterd's `options` startup parameter.
///
/// chatterd sends its server-side timeouts in `options`. PgBouncer's stock configuration refuses any startup
/// parameter it does not know (`FATAL: unsupported startup parameter: options`), and would then refuse every
/// connection. Such a refusal is answered by connecting again without `options`: the timeouts are then the
/// database's or the role's own settings (`ALTER ROLE ... SET statement_timeout`), which `serve` says at start-up.
extension ConnectionParameters {
    /// PgBouncer's words when it refuses a startup parameter, for `options`.
    static let optionsRefusal = "unsupported startup parameter: options"

    /// A libpq connection, open or failed (`PQstatus` tells), or nil when out of memory. Blocks for at most the
    /// connect timeout per host, twice when the first attempt is refused for `options`.
    func connect() -> OpaquePointer? {
        let connection = withCArrays { PQconnectdbParams($0, $1, 0) }
        guard let connection, PQstatus(connection) != CONNECTION_OK, let fallback = withoutServerOptions,
            Self.refusesOptions(String(cString: PQerrorMessage(connection)))
        else { return connection }
        PQfinish(connection)
        return fallback.withCArrays { PQconnectdbParams($0, $1, 0) }
    }

    static func refusesOptions(_ message: String) -> Bool {
        message.contains(optionsRefusal)
    }
}

/// What a start-up check found about the server behind a conninfo.
public enum ServerOptionsCheck: Sendable, Equatable {
    /// The server took chatterd's `options`, so its statement and idle-in-transaction timeouts apply.
    case accepted
    /// A pooler refused `options`; connections go without them, and so without chatterd's timeouts.
    case refusedByPooler
    /// Nothing could be learnt: the server did not answer, or refused for another reason.
    case unknown

    /// Connects once to the server `conninfo` names and says whether it takes chatterd's `options`.
    public static func probe(conninfo: String) -> ServerOptionsCheck {
        guard let parameters = try? ConnectionParameters(conninfo: conninfo, statementTimeout: .seconds(5)),
            let connection = parameters.withCArrays({ PQconnectdbParams($0, $1, 0) })
        else { return .unknown }
        defer { PQfinish(connection) }
        if PQstatus(connection) == CONNECTION_OK { return .accepted }
        return ConnectionParameters.refusesOptions(String(cString: PQerrorMessage(connection)))
            ? .refusedByPooler : .unknown
    }
}
