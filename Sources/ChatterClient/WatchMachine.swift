import JSON

/// What `chatter watch` does next, as `WatchMachine` decides it.
public enum WatchAction: Equatable, Sendable {
    /// Wait `afterSeconds`, then open the live feed, with `Last-Event-ID` when there is one; print `notice`
    /// to stderr first when there is one.
    case subscribe(lastEventID: String?, afterSeconds: Double, notice: String?)
    /// Wait, then fetch the feed for its `Feed-Position` (and nothing else of it).
    case fetchPosition(afterSeconds: Double, notice: String?)
    /// Keep reading the stream.
    case read
    /// Print this row, then keep reading.
    case show([String?])
    /// Print that the chatt with this id was removed, then keep reading.
    case showRemoval(String)
    /// Stop with this error.
    case fail(ClientError)
}

/// The reconnect decisions of `chatter watch` on the live-feed contract (docs/API.md): pure, no sockets, no clock.
///
/// Handed each event (an answer, a stream item, a drop, a failure), it returns what to do. It keeps the last
/// event id shown, so a new subscription resumes right after it: no gap, no repeat.
public struct WatchMachine<Random: RandomNumberGenerator> {
    /// The server's heartbeat period by default (`--stream-heartbeat`), in seconds.
    public static var heartbeatSeconds: Double { 15 }
    /// How long a stream may stay silent before it counts as dropped: 2.5 heartbeats.
    public static var silenceLimitSeconds: Double { 2.5 * heartbeatSeconds }
    /// Answers that say "not now" rather than "no": tried again after the back-off.
    public static var retriedStatuses: Set<Int> { [429, 502, 503, 504] }

    /// Which request is under way, so a failure retries the same one.
    private enum Phase {
        case streaming, fetchingPosition
    }

    /// Elements in a row: `ChattResponse.mapsWidth` or `chattsWidth`.
    public let width: Int
    /// The id of the last event shown (or the position fetched after a reset); nil before the first.
    public private(set) var lastEventID: String?
    private var backoff = ReconnectBackoff()
    private var generator: Random
    private var phase = Phase.streaming
    /// Whether the current stream has delivered a chatt or a heartbeat: a stream that worked.
    private var delivered = false

    /// A machine for rows of `width` elements, drawing its jitter from `generator`.
    public init(width: Int, generator: Random) {
        self.width = width
        self.generator = generator
    }

    /// The first subscription: without `Last-Event-ID`, so it starts at the end of the feed.
    public mutating func start() -> WatchAction {
        .subscribe(lastEventID: nil, afterSeconds: 0, notice: nil)
    }

    /// The stream's head (with the whole body when it is not 200).
    public mutating func streamAnswered(_ response: HTTPClientResponse) -> WatchAction {
        guard response.status == 200 else { return refused(response) }
        let type = response.values(of: "content-type").first ?? ""
        guard Self.trimmed(type.lowercased().prefix { $0 != ";" }) == "text/event-stream" else {
            return .fail(.malformedResponse("the live feed answered with \(type.isEmpty ? "no" : type) content type"))
        }
        delivered = false
        return .read
    }

    /// One item of the stream.
    public mutating func received(_ item: ServerSentEventParser.Item) -> WatchAction {
        guard case .event(let event) = item else {
            delivered = true
            return .read
        }
        if event.type == "reset" {
            // Only a chatt shown starts the back-off over here: a server that opens each stream with a comment and
            // then resets must not be asked again and again at once.
            let wait = backoff.next(using: &generator)
            phase = .fetchingPosition
            let notice = "the server cannot resume the live feed where it was (reset): chatts may have been missed"
            return .fetchPosition(afterSeconds: wait, notice: notice)
        }
        guard Self.isUsable(event.lastEventID) else {
            return .fail(.malformedResponse("event id \(event.lastEventID) cannot be sent back as Last-Event-ID"))
        }
        // An empty id (`id:` with no value) forgets the position, as the WHATWG rule says.
        let id = event.lastEventID.isEmpty ? nil : event.lastEventID
        if event.type == "delete", let data = event.data {
            guard case .string(let removed)? = try? JSONParser.parse(data) else {
                return .fail(.malformedResponse("the data of removal \(event.lastEventID) is not a JSON string"))
            }
            lastEventID = id
            delivered = true
            return .showRemoval(removed)
        }
        guard event.type == "message", let data = event.data else {
            lastEventID = id
            return .read
        }
        guard let value = try? JSONParser.parse(data) else {
            return .fail(.malformedResponse("the data of event \(event.lastEventID) is not JSON"))
        }
        let row: [String?]
        do {
            row = try ChattResponse.row(value, width: width, named: "event \(event.lastEventID)")
        } catch {
            return .fail(error)
        }
        lastEventID = id
        delivered = true
        backoff.reset()
        return .show(row)
    }

    /// The stream ended: closed, cut, timed out, or its framing broke (`error` says which when not nil).
    public mutating func streamEnded(_ error: ClientError?) -> WatchAction {
        // A stream that delivered something worked: the next wait starts small again.
        if delivered { backoff.reset() }
        delivered = false
        phase = .streaming
        return retry(error.map { "the live feed dropped: \($0)" } ?? "the live feed ended")
    }

    /// A request could not be made or its head not read.
    public mutating func requestFailed(_ error: ClientError) -> WatchAction {
        guard case .connection = error else { return .fail(error) }
        return retry(error.description)
    }

    /// The answer to the feed fetched after a reset.
    public mutating func feedAnswered(_ response: HTTPClientResponse) -> WatchAction {
        guard response.status == 200 else { return refused(response) }
        guard let position = response.values(of: "feed-position").first, !position.isEmpty, Self.isUsable(position)
        else { return .fail(.malformedResponse("the feed's answer has no usable Feed-Position header")) }
        lastEventID = position
        phase = .streaming
        return .subscribe(lastEventID: position, afterSeconds: 0, notice: nil)
    }

    /// A status other than 200: retried when it means "later", else the end, with the server's reason.
    private mutating func refused(_ response: HTTPClientResponse) -> WatchAction {
        let error = ClientError.httpStatus(code: response.status, reason: ChattResponse.reason(response))
        guard Self.retriedStatuses.contains(response.status) else { return .fail(error) }
        // Retry-After as delay-seconds (RFC 9110 §10.2.3); an HTTP date is left to the back-off.
        let retryAfter = response.values(of: "retry-after").first.flatMap { Int(Self.trimmed($0[...])) }
        return retry(error.description, notBefore: retryAfter)
    }

    /// The same request again after the next back-off (and no sooner than `Retry-After`, up to the cap).
    private mutating func retry(_ why: String, notBefore retryAfter: Int? = nil) -> WatchAction {
        var wait = backoff.next(using: &generator)
        if let retryAfter, retryAfter > 0 {
            wait = max(wait, min(Double(retryAfter), ReconnectBackoff.capSeconds))
        }
        let notice = "\(why); trying again in \((wait * 10).rounded() / 10) s"
        switch phase {
        case .streaming: return .subscribe(lastEventID: lastEventID, afterSeconds: wait, notice: notice)
        case .fetchingPosition: return .fetchPosition(afterSeconds: wait, notice: notice)
        }
    }

    /// `text` without leading and trailing spaces and tabs.
    private static func trimmed(_ text: Substring) -> String {
        String(decoding: ByteSet.trimmingWhitespace(ArraySlice(text.utf8)), as: UTF8.self)
    }

    /// Whether `id` can go in a header as it is: at most 1024 visible ASCII characters (empty: none is sent).
    static func isUsable(_ id: String) -> Bool {
        id.utf8.count <= 1024 && id.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
