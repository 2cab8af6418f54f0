import HTTPCore

/// A connection's request bookkeeping, the same for both protocols: the id each request is answered under, who it
/// is from, since when it has been in flight, and its exchange, reported once its response is made.
struct RequestRecorder {
    /// One request from the moment it is handed out (or found unreadable) until its response is reported.
    struct Record {
        /// Nil for a request that could not be read.
        let request: HTTPRequest?
        /// The `X-Request-Id` its response echoes.
        let id: String
        let client: ClientAddress
        let startedAt: Instant
    }

    /// The start of every id this connection makes (see `RequestID`).
    private let stem: String
    private let identity: ClientIdentity
    private let observe: @Sendable (HTTPExchange) -> Void
    /// Requests begun on this connection, readable or not: the last one made an id ends with this number.
    private(set) var begun = 0

    init(
        prefix: String, connectionID: Int, identity: ClientIdentity,
        observe: @escaping @Sendable (HTTPExchange) -> Void
    ) {
        stem = RequestID.stem(prefix: prefix, connectionID: connectionID)
        self.identity = identity
        self.observe = observe
    }

    /// `request` as the handler gets it, marked with its client and its id (the client's `X-Request-Id` when
    /// acceptable, else a new one: see `RequestID.given`), and its record.
    mutating func begin(_ request: HTTPRequest, at now: Instant) -> (HTTPRequest, Record) {
        begun += 1
        var (request, client) = identity.marked(request)
        let id = RequestID.given(in: request.headers) ?? madeID()
        request.requestID = id
        return (request, Record(request: request, id: id, client: client, startedAt: now))
    }

    /// The record of a request that could not be read, answered with an error at `now`.
    mutating func beginUnreadable(at now: Instant) -> Record {
        begun += 1
        return Record(request: nil, id: madeID(), client: identity.connection, startedAt: now)
    }

    /// Reports `record`'s exchange: its response, the body bytes that go on the wire, and the protocol.
    func finish(_ record: Record, _ response: HTTPResponse, bodyBytes: Int, version: HTTPVersion, at now: Instant) {
        observe(HTTPExchange(
            request: record.request, response: response, bodyBytes: bodyBytes, seconds: now.seconds(since: record.startedAt),
            remoteAddress: record.client.text, requestID: record.id, version: version))
    }

    private func madeID() -> String {
        stem + String(begun)
    }
}
