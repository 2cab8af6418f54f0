import HTTPCore

/// A response body on its way out of one HTTP/2 stream, as one state: the bytes of a fixed body, or a live body
/// (server-sent events) pulled a piece at a time as nghttp2 asks for DATA. Every change goes through `handle`.
struct HTTP2ResponseBody {
    enum State {
        /// Nothing to send: no body, or all of a fixed one sent.
        case none
        /// A fixed body, sent up to `sent`; its last bytes end the stream.
        case fixed(HTTPBody, sent: Int)
        /// A live body: the piece last pulled from `source`, sent up to `sent`, then whatever `source` gives next.
        case live(any ResponseBodyStream, piece: HTTPBody, sent: Int)
        /// The live body is over and everything it gave is sent: an empty DATA frame ends the stream.
        case ended
        /// The live body fell too far behind: the stream is to be reset.
        case cut
    }

    enum Event {
        /// nghttp2 asks for the next DATA frame, of at most `limit` bytes: a live body whose piece is all sent is
        /// pulled.
        case frameWanted(limit: Int)
        /// This many bytes went out in a DATA frame.
        case sent(Int)
        /// The live body woke: it may have been cut, even with bytes of its piece still waiting on the client's
        /// window (nghttp2 asks for no data then, so this is the only place the cut is seen).
        case woke
        /// The server is draining: the live body ends after what it has given.
        case finish
        /// The stream is gone or given up: everything is let go of.
        case drop
    }

    /// What the next DATA frame is.
    enum Frame: Equatable {
        /// This many body bytes (at most the limit asked), the last of the body or not.
        case data(count: Int, isLast: Bool)
        /// No more body: an empty frame ends the stream.
        case end
        /// A live body has nothing now (or is cut): deferred until it wakes.
        case wait
        case none
    }

    private(set) var state: State

    /// The body of a response: `body`, then `live`'s pieces if it has one.
    init(_ body: HTTPBody, live: (any ResponseBodyStream)? = nil) {
        if let live {
            state = .live(live, piece: body, sent: 0)
        } else {
            state = body.isEmpty ? .none : .fixed(body, sent: 0)
        }
    }

    /// Bytes given to the stream and not yet sent.
    var unsent: Int {
        switch state {
        case .fixed(let body, let sent), .live(_, let body, let sent): body.count - sent
        case .none, .ended, .cut: 0
        }
    }

    var isLive: Bool {
        if case .live = state { return true }
        return false
    }

    var isCut: Bool {
        if case .cut = state { return true }
        return false
    }

    /// The one transition: what `event` does to the body.
    mutating func handle(_ event: Event) {
        switch (state, event) {
        case (.live(let source, _, _), .frameWanted(let limit)) where unsent == 0:
            switch source.next(limit: limit) {
            case .bytes(let piece): state = .live(source, piece: piece, sent: 0)
            case .idle: break
            case .ended: state = .ended
            case .cut: cut(source)
            }
        case (.fixed(let body, let sent), .sent(let count)):
            state = sent + count < body.count ? .fixed(body, sent: sent + count) : .none
        case (.live(let source, let piece, let sent), .sent(let count)):
            // A piece all sent is let go of at once; the next is pulled when nghttp2 asks.
            state = sent + count < piece.count ? .live(source, piece: piece, sent: sent + count)
                : .live(source, piece: HTTPBody(), sent: 0)
        case (.live(let source, _, _), .woke):
            if source.next(limit: 0) == .cut { cut(source) }
        case (.live(let source, let piece, let sent), .finish):
            source.close()
            state = sent < piece.count ? .fixed(piece, sent: sent) : .ended
        case (.live(let source, _, _), .drop):
            source.close()
            state = .none
        case (_, .drop):
            state = .none
        default:
            break
        }
    }

    /// The next DATA frame of at most `limit` bytes, as the body stands now.
    func frame(limit: Int) -> Frame {
        switch state {
        case .fixed(let body, let sent):
            let count = min(limit, body.count - sent)
            return .data(count: count, isLast: sent + count == body.count)
        case .live:
            return unsent > 0 ? .data(count: min(limit, unsent), isLast: false) : .wait
        case .ended: return .end
        case .cut: return .wait
        case .none: return .none
        }
    }

    /// Calls `visit` with the slices of the bytes `count` from the next one unsent (a frame may span two segments).
    func forEachSlice(count: Int, _ visit: (ArraySlice<UInt8>) -> Void) {
        switch state {
        case .fixed(let bytes, let sent), .live(_, let bytes, let sent):
            bytes.forEachSlice(in: sent..<(sent + count), visit)
        case .none, .ended, .cut:
            break
        }
    }

    /// Nothing more is pulled from a body that fell behind.
    private mutating func cut(_ source: any ResponseBodyStream) {
        source.close()
        state = .cut
    }
}
