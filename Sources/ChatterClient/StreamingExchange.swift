/// A response whose body is read as it arrives, such as a live feed's event stream.
public protocol StreamingResponse: AnyObject {
    /// The response head; for any status but 200, with its whole body (the `{"error": ...}` to show).
    func head() throws(ClientError) -> HTTPClientResponse
    /// The next body bytes (possibly none, when a read held only framing); nil once the body has ended.
    func nextBody() throws(ClientError) -> [UInt8]?
}

/// One request over a fresh connection, its response read piece by piece: `HTTPExchange` for a body that
/// does not end by itself.
public final class StreamingExchange: StreamingResponse {
    /// Most bytes of a non-200 answer's body kept to show its error.
    static let maxErrorBodyBytes = 64 * 1024

    private let stream: any ByteStream
    private let bodyTimeoutSeconds: Double
    private var parser = HTTPResponseParser()
    private var buffer = [UInt8](repeating: 0, count: HTTPExchange.readSize)
    /// Body bytes that came with the head, handed out by the first `nextBody`.
    private var pending: [UInt8] = []
    private var complete = false

    /// Connects, sends `request`, and waits at most `bodyTimeoutSeconds` for each read once the head is in.
    public init(
        _ request: HTTPClientRequest, options: ConnectionOptions, bodyTimeoutSeconds: Double
    ) throws(ClientError) {
        stream = try HTTPExchange.connect(options)
        self.bodyTimeoutSeconds = bodyTimeoutSeconds
        try stream.write(request.bytes)
    }

    public func head() throws(ClientError) -> HTTPClientResponse {
        while true {
            guard let part = try readPart() else { return try parser.finish() }
            pending += part.body
            guard var head = part.head else { continue }
            guard head.status == 200 else {
                head.body = try restOfBody()
                return head
            }
            try stream.setReadTimeout(seconds: bodyTimeoutSeconds)
            return head
        }
    }

    public func nextBody() throws(ClientError) -> [UInt8]? {
        if !pending.isEmpty {
            defer { pending = [] }
            return pending
        }
        guard !complete, let part = try readPart() else { return nil }
        return part.body
    }

    /// One read's worth of the response; nil when the server has closed.
    private func readPart() throws(ClientError) -> HTTPResponseParser.StreamedPart? {
        let count = try stream.read(into: &buffer)
        guard count > 0 else { return nil }
        let part = try parser.receiveStreaming(buffer[..<count])
        complete = part.isComplete
        return part
    }

    /// The body of an error answer, up to `maxErrorBodyBytes`: enough for its `{"error": ...}`.
    private func restOfBody() throws(ClientError) -> [UInt8] {
        while !complete && pending.count < Self.maxErrorBodyBytes {
            guard let part = try readPart() else { break }
            pending += part.body
        }
        defer { pending = [] }
        return Array(pending.prefix(Self.maxErrorBodyBytes))
    }
}
