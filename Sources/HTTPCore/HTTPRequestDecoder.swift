/// What the decoder produced from the bytes so far.
public enum HTTPDecoderEvent: Sendable, Equatable {
    /// The head of a request with `Expect: 100-continue` and a body still to come was read;
    /// the server should send `100 Continue` once, then keep feeding bytes.
    case expectContinue
    /// A complete request.
    case request(HTTPRequest)
}

/// Incremental HTTP/1.1 request decoder (RFC 9112), strict by default.
///
/// Feed bytes as they arrive with `append`, then call `next()` until it returns nil (more bytes needed).
/// Bytes after a complete request stay buffered for the next call (pipelining). After `next()` throws,
/// the decoder is finished: the caller answers `error.status` with `Connection: close` and closes.
public struct HTTPRequestDecoder: Sendable {
    public let limits: HTTPLimits

    private enum Phase {
        case head
        case body(RequestHead)
        case failed(HTTPParseError)
    }

    /// Consumed bytes are skipped by `readIndex` and dropped in `compact()`, never removed one by one.
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var phase = Phase.head
    private var headParser: RequestHeadParser
    private var chunkedBody: ChunkedBodyDecoder

    /// Consumed bytes are only moved out of the buffer once they are at least this many (and at least half of it).
    private static let compactionThreshold = 4096

    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
        headParser = RequestHeadParser(limits: limits)
        chunkedBody = ChunkedBodyDecoder(limits: limits)
    }

    /// Buffers `bytes`. After `next()` has thrown, bytes are discarded: nothing more will be parsed.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if case .failed = phase { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// The next event, or nil when more bytes are needed.
    /// - Throws: the first `HTTPParseError`, and the same error on every later call.
    public mutating func next() throws(HTTPParseError) -> HTTPDecoderEvent? {
        do throws(HTTPParseError) {
            switch phase {
            case .failed(let error):
                throw error
            case .head:
                guard let head = try headParser.parse(buffer, readIndex: &readIndex) else { return nil }
                headParser = RequestHeadParser(limits: limits)
                phase = .body(head)
                // A body that is already all here needs no 100 Continue (RFC 9110 §10.1.1 lets us skip it).
                if let request = try readBody(head) { return .request(request) }
                return head.expectsContinue ? .expectContinue : nil
            case .body(let head):
                return try readBody(head).map(HTTPDecoderEvent.request)
            }
        } catch {
            phase = .failed(error)
            throw error
        }
    }

    /// True while part of a request (at least one byte other than leading CRLF) is buffered.
    public var isMidRequest: Bool {
        switch phase {
        case .body, .failed:
            return true
        case .head:
            if headParser.hasRequestLine { return true }
            var index = readIndex
            while index + 1 < buffer.count, buffer[index] == ByteClass.cr, buffer[index + 1] == ByteClass.lf {
                index += 2
            }
            // A lone CR may still turn out to be a skipped empty line.
            let rest = buffer.count - index
            return rest > 1 || (rest == 1 && buffer[index] != ByteClass.cr)
        }
    }

    /// True once the head of the current request is complete and its body is being read.
    public var isReadingBody: Bool {
        if case .body = phase { return true }
        return false
    }

    /// Number of bytes buffered and not yet consumed.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Reads the body framed by `head`; the request once the body is complete.
    private mutating func readBody(_ head: RequestHead) throws(HTTPParseError) -> HTTPRequest? {
        let body: [UInt8]
        switch head.framing {
        case .none:
            body = []
        case .length(let length):
            guard buffer.count - readIndex >= length else { return nil }
            body = Array(buffer[readIndex..<(readIndex + length)])
            readIndex += length
        case .chunked:
            guard try chunkedBody.decode(buffer, readIndex: &readIndex) else { return nil }
            body = chunkedBody.body
            chunkedBody = ChunkedBodyDecoder(limits: limits)
        }
        phase = .head
        let line = head.line
        return HTTPRequest(
            method: line.method, target: line.target.target, path: line.target.path, query: line.target.query,
            version: line.version, headers: head.headers, body: body)
    }

    /// Drops consumed bytes: all of them when everything was read, otherwise only once they are many,
    /// so the cost stays amortised O(1) per byte.
    private mutating func compact() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        } else if readIndex >= Self.compactionThreshold, readIndex >= buffer.count / 2 {
            buffer.removeSubrange(..<readIndex)
            readIndex = 0
        }
    }
}
