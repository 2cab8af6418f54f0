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
    }

    var phase: Phase
    /// The request's fields as they are decoded.
    var head: HTTP2RequestHead
    /// The request once its header block ended acceptably (the body is still arriving).
    var request: HTTPRequest?
    var body: [UInt8] = []
    /// The bookkeeping of the request being answered (see `RequestRecorder`).
    var record: RequestRecorder.Record?
    /// The response body still to send, from `sent` on.
    var responseBody = HTTPBody()
    var sent = 0
    /// Reset the stream with NO_ERROR once its response is out: the client may still be sending a body we
    /// refused, and RFC 9113 §8.1 lets a server that has answered ask it to stop this way.
    var resetWhenSent = false

    init(head: HTTP2RequestHead, at now: Instant) {
        self.head = head
        phase = .arriving(since: now)
    }

    /// Its request's body has stalled since this instant, while it is arriving.
    var arrivingSince: Instant? {
        if case .arriving(let since) = phase { return since }
        return nil
    }

    /// Whether its request is with the handler.
    var isHandling: Bool {
        if case .handling = phase { return true }
        return false
    }
}
