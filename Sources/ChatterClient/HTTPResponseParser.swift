import ASCII
import HTTPCore

/// Parses one HTTP/1.1 response (RFC 9112) as its bytes arrive: the head, then a body framed by
/// `Content-Length`, chunked transfer coding, or the end of the connection.
///
/// No socket here: feed it with `receive(_:)` and call `finish()` when the peer closes.
public struct HTTPResponseParser {
    /// Longest status line, header field, chunk-size line or trailer field accepted, in bytes.
    public static let maxLineBytes = 16 * 1024
    /// Most bytes the whole head (status line and fields) may take.
    public static let maxHeadBytes = 64 * 1024
    /// Most header fields accepted.
    public static let maxFieldCount = 200
    /// Default body limit: far above any real `/getmaps`, low enough to stop a runaway server.
    public static let defaultMaxBodyBytes = 512 * 1024 * 1024

    /// Which part of the response comes next.
    enum State {
        case statusLine, fields
        case fixedBody(remaining: Int)
        case bodyUntilClose
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd, trailers, done
    }

    /// The body limit this parser enforces.
    public let maxBodyBytes: Int
    /// Where parsing stands.
    var state = State.statusLine
    /// The status code of the head parsed last.
    var status = 0
    /// Its reason phrase.
    var reason = ""
    /// Its header fields.
    var headers: [(name: String, value: String)] = []
    private var headBytes = 0
    private var buffer: [UInt8] = []
    private var start = 0
    /// The body received so far; `receiveStreaming` hands it out and empties it.
    var body: [UInt8] = []
    /// Whether `receiveStreaming` has handed out the head.
    var headReported = false

    /// A parser for one response whose body may not exceed `maxBodyBytes`.
    public init(maxBodyBytes: Int = defaultMaxBodyBytes) {
        self.maxBodyBytes = maxBodyBytes
    }

    /// Takes the next received bytes; returns the response as soon as it is complete.
    public mutating func receive(_ bytes: some Collection<UInt8>) throws(ClientError) -> HTTPClientResponse? {
        // Drop consumed bytes now and then, so a long body does not keep its whole wire form around twice.
        if start > 65_536 && start * 2 > buffer.count {
            buffer.removeSubrange(..<start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
        try advance()
        if case .done = state { return response }
        return nil
    }

    /// The peer closed the connection: returns the response if the close completes it.
    public mutating func finish() throws(ClientError) -> HTTPClientResponse {
        switch state {
        case .done, .bodyUntilClose:
            state = .done
            return response
        case .statusLine where buffer.isEmpty:
            throw .connection("the server closed the connection without answering")
        case .statusLine, .fields:
            throw .malformedResponse("the connection closed in the middle of the response head")
        case .fixedBody(let remaining):
            throw .malformedResponse("the connection closed \(remaining) bytes before the end of the body")
        case .chunkSize, .chunkData, .chunkDataEnd, .trailers:
            throw .malformedResponse("the connection closed before the last chunk of the body")
        }
    }

    var response: HTTPClientResponse {
        HTTPClientResponse(status: status, reason: reason, headers: headers, body: body)
    }

    /// Consumes as much of the buffer as the current state allows.
    private mutating func advance() throws(ClientError) {
        while true {
            switch state {
            case .statusLine, .fields:
                guard let line = try nextLine(counted: true) else { return }
                try headLine(line)
            case .fixedBody(let remaining):
                let taken = try takeBody(upTo: remaining)
                state = taken == remaining ? .done : .fixedBody(remaining: remaining - taken)
                if taken < remaining { return }
            case .bodyUntilClose:
                _ = try takeBody(upTo: .max)
                return
            case .chunkSize:
                guard let line = try nextLine(counted: false) else { return }
                let size = try Self.chunkSize(line)
                state = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                let taken = try takeBody(upTo: remaining)
                state = taken == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - taken)
                if taken < remaining { return }
            case .chunkDataEnd:
                guard let line = try nextLine(counted: false) else { return }
                guard line.isEmpty else { throw .malformedResponse("chunk data longer than its size") }
                state = .chunkSize
            case .trailers:
                // Trailer fields (RFC 9112 §7.1.2) carry nothing chatter needs.
                guard let line = try nextLine(counted: false) else { return }
                if line.isEmpty { state = .done }
            case .done:
                return
            }
        }
    }

    /// Moves up to `limit` buffered bytes into the body; returns how many moved.
    private mutating func takeBody(upTo limit: Int) throws(ClientError) -> Int {
        let count = min(limit, buffer.count - start)
        guard body.count + count <= maxBodyBytes else {
            throw .malformedResponse("body larger than \(maxBodyBytes) bytes")
        }
        body.append(contentsOf: buffer[start..<start + count])
        start += count
        return count
    }

    /// The next line without its LF or CRLF, or nil until one is complete; head lines count toward the head limit.
    private mutating func nextLine(counted: Bool) throws(ClientError) -> ArraySlice<UInt8>? {
        guard let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) else {
            guard buffer.count - start <= Self.maxLineBytes else { throw .malformedResponse("line too long") }
            return nil
        }
        let end = newline > start && buffer[newline - 1] == UInt8(ascii: "\r") ? newline - 1 : newline
        let line = buffer[start..<end]
        if counted {
            headBytes += newline + 1 - start
            guard headBytes <= Self.maxHeadBytes else { throw .malformedResponse("response head too large") }
        }
        start = newline + 1
        return line
    }

    /// Parses a chunk-size line (RFC 9112 §7.1): hex digits, then optional `;extensions`.
    static func chunkSize(_ line: ArraySlice<UInt8>) throws(ClientError) -> Int {
        let digits = ByteSet.trimmingWhitespace(line.prefix { $0 != UInt8(ascii: ";") })
        // 15 hex digits stay below Int.max, so the conversion cannot overflow.
        guard !digits.isEmpty, digits.count <= 15, digits.allSatisfy({ ASCII.hexValue($0) != nil }),
            let size = Int(String(decoding: digits, as: UTF8.self), radix: 16)
        else { throw .malformedResponse("bad chunk size line") }
        return size
    }
}

/// Byte classes used by the parser.
enum ByteSet {
    /// `bytes` without leading and trailing spaces and tabs (RFC 9110 §5.6.3 OWS).
    static func trimmingWhitespace(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let first = bytes.firstIndex(where: { !ByteClass.isWhitespace($0) }),
            let last = bytes.lastIndex(where: { !ByteClass.isWhitespace($0) })
        else { return bytes[bytes.endIndex...] }
        return bytes[first...last]
    }
}
