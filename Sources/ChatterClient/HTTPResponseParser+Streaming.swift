extension HTTPResponseParser {
    /// What one `receiveStreaming` call made of the bytes: the head once it is whole, and the body bytes since.
    public struct StreamedPart: Equatable, Sendable {
        /// The head (with an empty body), in the call that completes it, and only then.
        public var head: HTTPClientResponse?
        /// Body bytes that arrived, with any chunked framing removed.
        public var body: [UInt8]
        /// Whether the response has ended (`Content-Length` reached, or the last chunk).
        public var isComplete: Bool
    }

    /// Takes the next received bytes of a response whose body is read as it arrives, such as an event stream;
    /// the body limit then applies to each call's bytes, not to the whole.
    public mutating func receiveStreaming(_ bytes: some Collection<UInt8>) throws(ClientError) -> StreamedPart {
        _ = try receive(bytes)
        var part = StreamedPart(head: nil, body: [], isComplete: false)
        switch state {
        case .statusLine, .fields:
            return part
        case .done:
            part.isComplete = true
        default:
            break
        }
        if !headReported {
            headReported = true
            part.head = HTTPClientResponse(status: status, reason: reason, headers: headers, body: [])
        }
        swap(&part.body, &body)
        return part
    }
}
