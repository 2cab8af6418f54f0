import HTTPCore

/// Everything about one HTTP/2 stream, from its first HEADERS until nghttp2 closes it: the request as it
/// arrives, its place with the handler, and its response as it leaves. One record per stream, kept in the
/// session's `HTTP2StreamTable`: a class, so no callback copies the record in and out of the table. Its phase
/// moves only through the methods below.
final class HTTP2Stream {
    enum Phase {
        /// The header block or body is arriving; `since` is its last progress, for the body idle deadline.
        case arriving(since: Instant)
        /// Complete, and waiting in the table's queue to be handed out.
        case complete(HTTPRequest)
        /// Answered with an error before it was handed out (a broken limit, or too slow); further body bytes
        /// are dropped. The response waits in the table's queue until the driver takes it.
        case rejected(HTTPResponse)
        /// With the handler; its response carries a body unless this is HEAD (or the status allows none).
        case handling(HTTPMethod)
        /// Its response has been submitted. With `resetWhenSent`, the stream is reset with NO_ERROR once the
        /// response is out: the client may still be sending a body we refused, and RFC 9113 §8.1 lets a server
        /// that has answered ask it to stop this way.
        case responding(resetWhenSent: Bool)
        /// The client reset it while its request was with the handler: the answer is reported, not sent.
        case closedWhileHandling
        /// We reset it (refused before any processing, or its response given up on): nothing more is read or
        /// sent, and nghttp2 closes it once the RST_STREAM is out.
        case abandoned
    }

    private(set) var phase: Phase
    /// The request's fields as they are decoded.
    var head: HTTP2RequestHead
    /// The request once its header block ended acceptably (the body is still arriving).
    var request: HTTPRequest?
    /// The request body so far.
    private(set) var body: [UInt8] = []
    /// The request body's rate window, from the end of the header block, as HTTP/1.1 measures a body.
    var bodyRate: RateWindow?
    /// The bookkeeping of the request being answered (see `RequestRecorder`).
    var record: RequestRecorder.Record?
    /// The response body as it leaves.
    private(set) var response = HTTP2ResponseBody(HTTPBody())
    /// How the response body moves against the client's flow-control window (see `HTTP2Stream+Deadlines`).
    var pace = SendPace()

    init(head: HTTP2RequestHead, at now: Instant) {
        self.head = head
        phase = .arriving(since: now)
    }

    /// Whether its request is with the handler.
    var isHandling: Bool {
        if case .handling = phase { return true }
        return false
    }

    /// Whether we reset it (see `Phase.abandoned`).
    var isAbandoned: Bool {
        if case .abandoned = phase { return true }
        return false
    }

    /// Whether it is still open in nghttp2.
    var isOpen: Bool {
        switch phase {
        case .closedWhileHandling, .abandoned: false
        default: true
        }
    }

    /// Whether the response is to be reset with NO_ERROR once it is out (see `Phase.responding`).
    var resetsWhenSent: Bool {
        if case .responding(true) = phase { return true }
        return false
    }

    /// Whether response body bytes are still to be sent.
    var hasBodyToSend: Bool { response.unsent > 0 }

    /// Request body bytes arrived at `now`.
    func bodyArrived(_ bytes: UnsafeRawBufferPointer, at now: Instant) {
        body.append(contentsOf: bytes)
        bodyRate?.add(bytes.count)
        phase = .arriving(since: now)
    }

    /// Lets go of the request body; how many bytes it held.
    func releaseBody() -> Int {
        defer { body = [] }
        return body.count
    }

    /// The request arrived whole: it waits to be handed out.
    func completed(_ request: HTTPRequest) {
        self.request = nil
        phase = .complete(request)
    }

    /// The complete request, now with the handler; nil unless it is complete.
    func handOut() -> HTTPRequest? {
        guard case .complete(let request) = phase else { return nil }
        phase = .handling(request.method)
        return request
    }

    /// Refused with `response`, to be sent when the driver takes it.
    func reject(with response: HTTPResponse) {
        phase = .rejected(response)
    }

    /// Given up: nothing more is read or sent (its table has let go of its bodies).
    func abandon() {
        phase = .abandoned
    }

    /// Its response is submitted, with `body` to send.
    func respond(_ body: HTTP2ResponseBody, resetWhenSent: Bool) {
        response = body
        phase = .responding(resetWhenSent: resetWhenSent)
    }

    /// nghttp2 closed it (its table has let go of its bodies). A request with the handler keeps its record for
    /// the answer, which is then reported but not sent: whether the record stays.
    func closed() -> Bool {
        guard isHandling else { return false }
        phase = .closedWhileHandling
        return true
    }

    /// What `event` does to the response body, and to how its sending is measured (each body begins its
    /// measurement anew). Its table calls this, and counts the streams with bytes to send.
    func changeResponse(_ event: HTTP2ResponseBody.Event) {
        response.handle(event)
        if case .sent(let count) = event { pace.dataSent(count) }
        if !hasBodyToSend { pace = SendPace() }
    }
}
