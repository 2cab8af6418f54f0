import HTTPCore

/// Everything about one HTTP/2 stream, from its first HEADERS until nghttp2 closes it: the request as it
/// arrives, its place with the handler, and its response as it leaves. One record per stream, kept by
/// `HTTP2Session` (which nghttp2's callbacks reach) and updated in place by the machine and the driver above it:
/// a class, so no callback copies the record in and out of the session's table.
final class HTTP2Stream {
    enum Phase {
        /// The header block or body is arriving; `since` is its last progress, for the body idle deadline.
        case arriving(since: Instant)
        /// Complete, and waiting in the session's queue to be handed out.
        case complete(HTTPRequest)
        /// Answered with an error before it was handed out (a broken limit, or too slow); further body bytes
        /// are dropped. The response waits in the session's queue until the driver takes it.
        case rejected(HTTPResponse)
        /// With the handler; its response carries a body unless this is HEAD (or the status allows none).
        case handling(HTTPMethod)
        /// Its response has been submitted.
        case responding
        /// The client reset it while its request was with the handler: the answer is reported, not sent.
        case closedWhileHandling
        /// We reset it (refused before any processing, or its response given up on): nothing more is read or
        /// sent, and nghttp2 closes it once the RST_STREAM is out.
        case abandoned
    }

    var phase: Phase
    /// The request's fields as they are decoded.
    var head: HTTP2RequestHead
    /// The request once its header block ended acceptably (the body is still arriving).
    var request: HTTPRequest?
    var body: [UInt8] = []
    /// The request body's rate window, from the end of the header block, as HTTP/1.1 measures a body.
    var bodyRate: RateWindow?
    /// The bookkeeping of the request being answered (see `RequestRecorder`).
    var record: RequestRecorder.Record?
    /// The response body still to send, from `sent` on.
    var responseBody = HTTPBody()
    var sent = 0
    /// When the response body first had a chance to go out: its rate is measured from then.
    var sendingSince: Instant?
    /// Since when the response has waited on the client's flow-control window (its own or the connection's)
    /// without a byte going out; nil while it may send, or has nothing left to send.
    var windowStalledSince: Instant?
    /// While the response waits on the client's window, when the current rate check period began, and how much
    /// had been sent by then: its rate is checked at the end of each period in which it moved.
    var windowRateFrom: Instant?
    var sentAtWindowRateFrom = 0
    /// Where the response body comes from while the response lasts (server-sent events), until it ends; the
    /// bytes pulled from it wait in `responseBody`.
    var live: (any ResponseBodyStream)?
    /// The live body is over: the next DATA frame ends the stream.
    var liveEnded = false
    /// The live body fell too far behind: the stream is to be reset.
    var liveCut = false
    /// Reset the stream with NO_ERROR once its response is out: the client may still be sending a body we
    /// refused, and RFC 9113 §8.1 lets a server that has answered ask it to stop this way.
    var resetWhenSent = false

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

    /// Whether response body bytes are still to be sent.
    var hasBodyToSend: Bool { sent < responseBody.count }

    /// Request body bytes arrived at `now`.
    func bodyArrived(_ count: Int, at now: Instant) {
        bodyRate?.add(count)
        phase = .arriving(since: now)
    }

    /// `count` bytes of the response body went out in a DATA frame.
    func dataSent(_ count: Int) {
        sent += count
        windowStalledSince = nil
        if !hasBodyToSend { dropResponse() }
    }

    /// Whether the client's flow-control window lets the response move, as found at `now`.
    func windowObserved(open: Bool, at now: Instant) {
        if sendingSince == nil { sendingSince = now }
        guard !open else {
            windowStalledSince = nil
            return
        }
        if windowStalledSince == nil { windowStalledSince = now }
        if windowRateFrom == nil { beginRatePeriod(at: now) }
    }

    /// Begins a rate check period at `now`.
    func beginRatePeriod(at now: Instant) {
        windowRateFrom = now
        sentAtWindowRateFrom = sent
    }

    /// Forgets the response body still to send, and how it moved.
    func dropResponse() {
        responseBody = HTTPBody()
        sent = 0
        sendingSince = nil
        windowStalledSince = nil
        windowRateFrom = nil
    }
}
