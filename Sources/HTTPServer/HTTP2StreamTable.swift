import HTTPCore

/// The records of one HTTP/2 session's streams (see `HTTP2Stream`), with what is counted across them: streams
/// open, responses with bytes to send, and the request bodies the connection holds, and the queues of requests to
/// answer and to refuse, each in arrival order.
final class HTTP2StreamTable {
    /// What became of request body bytes offered to a stream.
    enum BodyVerdict {
        case taken
        /// The request's body passes the body limit.
        case tooLarge
        /// The connection's budget for held bodies would pass its limit.
        case overBudget
    }

    /// Every stream open now, and those closed while their request was with the handler (until it answers).
    private(set) var records: [Int32: HTTP2Stream] = [:]
    private(set) var openCount = 0
    /// Streams with response body bytes still to send.
    private(set) var sendingCount = 0
    /// Request body bytes held for streams still arriving, and the most the connection may hold.
    private var bufferedBodyBytes = 0
    private let maxBufferedBodyBytes: Int
    private let maxBodyBytes: Int
    private var complete = StreamQueue()
    private var rejected = StreamQueue()

    init(maxBodyBytes: Int, maxBufferedBodyBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
        self.maxBufferedBodyBytes = maxBufferedBodyBytes
    }

    subscript(_ id: Int32) -> HTTP2Stream? { records[id] }

    /// A stream opened: its header block began at `now`.
    func open(_ id: Int32, head: HTTP2RequestHead, at now: Instant) {
        records[id] = HTTP2Stream(head: head, at: now)
        openCount += 1
    }

    /// nghttp2 closed `id`; whether it had a record.
    func close(_ id: Int32) -> Bool {
        guard let stream = records[id] else { return false }
        openCount -= 1
        release(stream)
        changeResponse(of: stream, .drop)
        if !stream.closed() { records[id] = nil }
        return true
    }

    /// Forgets `id`'s record (answered after it closed).
    func forget(_ id: Int32) {
        records[id] = nil
    }

    /// Offers body bytes that arrived at `now` to `id`, still arriving.
    func bodyArrived(_ id: Int32, _ bytes: UnsafeRawBufferPointer, at now: Instant) -> BodyVerdict {
        guard let stream = records[id] else { return .taken }
        guard stream.body.count + bytes.count <= maxBodyBytes else { return .tooLarge }
        guard bufferedBodyBytes + bytes.count <= maxBufferedBodyBytes else { return .overBudget }
        bufferedBodyBytes += bytes.count
        stream.bodyArrived(bytes, at: now)
        return .taken
    }

    /// `id`'s request is whole: it waits to be handed out.
    func requestEnded(_ id: Int32, _ request: HTTPRequest) {
        guard let stream = records[id] else { return }
        var request = request
        request.body = stream.body
        release(stream)
        stream.completed(request)
        complete.append(id)
    }

    /// Refuses `id`'s request with `response` (queued for the driver to report and send).
    func reject(_ id: Int32, with response: HTTPResponse) {
        guard let stream = records[id] else { return }
        release(stream)
        stream.reject(with: response)
        rejected.append(id)
    }

    /// Gives `id` up; whether it was not given up already.
    func abandon(_ id: Int32) -> Bool {
        guard let stream = records[id], !stream.isAbandoned else { return false }
        release(stream)
        changeResponse(of: stream, .drop)
        stream.abandon()
        return true
    }

    /// The oldest stream whose request is complete, handed out to the handler.
    func nextComplete() -> (stream: Int32, request: HTTPRequest)? {
        while let id = complete.next() {
            // A stream reset before its turn has no record any more.
            if let request = records[id]?.handOut() { return (id, request) }
        }
        return nil
    }

    /// The oldest stream refused with an error, with the response and whether the request was a HEAD (whose
    /// answer goes without a body).
    func nextRejected() -> (stream: Int32, response: HTTPResponse, isHead: Bool)? {
        while let id = rejected.next() {
            if let stream = records[id], case .rejected(let response) = stream.phase {
                return (id, response, stream.head.isHead)
            }
        }
        return nil
    }

    /// `stream`'s response is submitted with `body` (in place of any before it).
    func respond(_ stream: HTTP2Stream, _ body: HTTP2ResponseBody, resetWhenSent: Bool) {
        changeResponse(of: stream, .drop)
        stream.respond(body, resetWhenSent: resetWhenSent)
        if stream.hasBodyToSend { sendingCount += 1 }
    }

    /// What `event` does to `stream`'s response body, counted.
    func changeResponse(of stream: HTTP2Stream, _ event: HTTP2ResponseBody.Event) {
        let wasSending = stream.hasBodyToSend
        stream.changeResponse(event)
        sendingCount += (stream.hasBodyToSend ? 1 : 0) - (wasSending ? 1 : 0)
    }

    // MARK: - Deadlines (see `HTTP2Stream+Deadlines`)

    /// Holds each stream to its deadlines at `now`: a request too slow is refused with 408, a response the
    /// client's window holds back too long is given up, and returned to be reset. When nothing else moves then
    /// (every other stream is given up too, or waits on the client's window), `follow` says why the connection
    /// should close.
    func enforceDeadlines(at now: Instant, _ timeouts: ConnectionTimeouts)
        -> (stalled: [Int32], follow: CloseReason?)
    {
        var stalled: [Int32] = []
        var givenUp: Set<Int32> = []
        for (id, stream) in records {
            switch stream.check(at: now, timeouts) {
            case .onTime:
                continue
            case .requestTimedOut:
                reject(id, with: .error(.requestTimeout, "request timed out"))
            case .requestTooSlow:
                reject(id, with: .error(.requestTimeout, "request too slow"))
            case .responseStalled:
                if abandon(id) { stalled.append(id) }
            }
            givenUp.insert(id)
        }
        guard !givenUp.isEmpty,
            records.allSatisfy({ givenUp.contains($0) || $1.isAbandoned || $1.isWaitingOnWindow })
        else { return (stalled, nil) }
        return (stalled, stalled.isEmpty ? .requestError : .sendStalled)
    }

    /// The earliest deadline of any stream.
    func deadline(_ timeouts: ConnectionTimeouts) -> Instant? {
        records.values.lazy.compactMap { $0.deadline(timeouts) }.min()
    }

    /// How the streams stand at the connection cap when every one waits on its client: as the one that moves
    /// best of them stands. Nil when any does not wait (or there is none).
    func standing(at now: Instant, _ timeouts: ConnectionTimeouts) -> ConnectionStanding? {
        var best: ConnectionStanding?
        for stream in records.values {
            guard let standing = stream.standing(at: now, timeouts) else { return nil }
            best = max(best ?? standing, standing)
        }
        return best
    }

    /// Lets go of the request body `stream` holds, from the connection's budget.
    private func release(_ stream: HTTP2Stream) {
        bufferedBodyBytes -= stream.releaseBody()
    }
}

/// Stream ids in first-in, first-out order; taking them leaves the storage for the next ones.
private struct StreamQueue {
    private var ids: [Int32] = []
    private var head = 0

    mutating func append(_ id: Int32) {
        ids.append(id)
    }

    mutating func next() -> Int32? {
        guard head < ids.count else { return nil }
        let id = ids[head]
        head += 1
        if head == ids.count {
            ids.removeAll(keepingCapacity: true)
            head = 0
        }
        return id
    }
}
