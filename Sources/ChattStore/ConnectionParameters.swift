import CLibPQ

/// libpq keyword/value pairs for opening connections: the operator's conninfo plus chatterd's safety settings.
///
/// The conninfo may be a URI (`postgresql://...`), `key=value` text, or empty (libpq defaults and `PG*`
/// environment variables). Parsing it with `PQconninfoParse` handles all three the same way, so the settings
/// below can be merged as keywords instead of by editing the string.
struct ConnectionParameters: Sendable {
    /// How quickly a connection that stopped answering is given up: a pooled connection is only at risk while a
    /// statement runs, the change listener's all the time (its trust must end within seconds of a silent partition).
    enum Liveness: Sendable {
        case pooled
        case listening
    }

    /// Keywords, in order, paired with `values`.
    let keywords: [String]
    /// Values for `keywords`.
    let values: [String]

    /// Settings every connection gets unless the conninfo sets the same keyword explicitly.
    /// Without them libpq would wait forever on a hung server (connect_timeout) and the kernel would take
    /// about two hours to notice a dead peer (keepalives); libpq ignores the TCP ones on Unix sockets.
    /// chatterd writes, so a session on a hot standby (or any read-only one) is useless to it: with a multi-host
    /// URL, libpq then tries the next host, which is how it finds a promoted primary after a failover.
    static let defaults: [(String, String)] = [
        ("connect_timeout", "3"),
        ("keepalives", "1"),
        ("keepalives_idle", "10"),
        ("keepalives_interval", "5"),
        ("keepalives_count", "3"),
        ("tcp_user_timeout", "10000"),
        ("application_name", "chatterd"),
        ("target_session_attrs", "read-write"),
    ]

    /// The change listener's: its health check every 2 s keeps data in flight, so tcp_user_timeout ends a silently
    /// partitioned session within 2 + 3 s; keepalives probe between checks. (libpq's connect_timeout applies to each
    /// host of a multi-host URL separately, so a dead first host costs 3 s per connect, not the whole attempt.)
    static let listeningDefaults: [(String, String)] = [
        ("keepalives_idle", "2"),
        ("keepalives_interval", "1"),
        ("keepalives_count", "2"),
        ("tcp_user_timeout", "3000"),
    ]

    /// Idle-in-transaction limit sent to the server with every connection.
    static let idleInTransactionTimeoutMilliseconds = 10_000

    /// Parses `conninfo` and merges the defaults and the server-side timeouts into it.
    /// - Throws: `.invalidConninfo`; libpq's message is not kept because it may quote part of the string.
    init(conninfo: String, statementTimeout: Duration, liveness: Liveness = .pooled) throws(StoreError) {
        var explicit = try Self.parse(conninfo)
        // Ours go first so that `-c` settings the operator passes in `options` win (the server applies them in order).
        let serverOptions = "-c statement_timeout=\(Self.milliseconds(statementTimeout)) "
            + "-c idle_in_transaction_session_timeout=\(Self.idleInTransactionTimeoutMilliseconds)"
        if let index = explicit.firstIndex(where: { $0.0 == "options" }) {
            explicit[index].1 = serverOptions + " " + explicit[index].1
        } else {
            explicit.append(("options", serverOptions))
        }
        let defaults = liveness == .listening ? Self.listeningDefaults + Self.defaults : Self.defaults
        for (keyword, value) in defaults where !explicit.contains(where: { $0.0 == keyword }) {
            explicit.append((keyword, value))
        }
        keywords = explicit.map(\.0)
        values = explicit.map(\.1)
    }

    private init(keywords: [String], values: [String]) {
        self.keywords = keywords
        self.values = values
    }

    /// The same parameters without `options`, for a pooler that refuses that startup parameter (PgBouncer does,
    /// unless its `ignore_startup_parameters` names it); nil when there is none to leave out.
    var withoutServerOptions: ConnectionParameters? {
        guard let index = keywords.firstIndex(of: "options") else { return nil }
        var keywords = keywords
        var values = values
        keywords.remove(at: index)
        values.remove(at: index)
        return ConnectionParameters(keywords: keywords, values: values)
    }

    /// The value for `keyword`, if set.
    func value(for keyword: String) -> String? {
        keywords.firstIndex(of: keyword).map { values[$0] }
    }

    /// Calls `body` with NULL-terminated C arrays of keywords and values, as `PQconnectdbParams` wants them.
    func withCArrays<T>(
        _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<UnsafePointer<CChar>?>) -> T
    ) -> T {
        let cKeywords = CStringArray(keywords, nullTerminated: true)
        let cValues = CStringArray(values, nullTerminated: true)
        return cKeywords.withPointers { keywordPointers in
            cValues.withPointers { valuePointers in body(keywordPointers, valuePointers) }
        }
    }

    /// The keyword/value pairs the conninfo sets explicitly, in libpq's order.
    private static func parse(_ conninfo: String) throws(StoreError) -> [(String, String)] {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &errorMessage) else {
            if let errorMessage { PQfreemem(errorMessage) }
            throw StoreError(.invalidConninfo)
        }
        defer { PQconninfoFree(options) }
        var pairs: [(String, String)] = []
        var option = options
        // The array ends with an entry whose keyword is NULL.
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                pairs.append((String(cString: keyword), String(cString: value)))
            }
            option += 1
        }
        return pairs
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
