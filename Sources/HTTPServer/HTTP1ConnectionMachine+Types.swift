import HTTPCore

/// The kinds `HTTP1ConnectionMachine` speaks in.
extension HTTP1ConnectionMachine {
    enum State: Equatable {
        /// Waiting for (more of) a request.
        case reading
        /// A request is with the handler.
        case processing
        /// A response is being written.
        case writing
        /// A response whose body is pulled from its stream as it is made (server-sent events); it ends the
        /// connection when it ends. No request deadline applies: only a full socket is measured.
        case streaming
        /// The final response is written and our side half-closed; input is drained until the peer closes
        /// (RFC 9112 §9.6), so unread request bytes do not turn that response into a reset.
        case lingering
        case closed
    }

    /// How the response to the request in flight goes on the wire.
    struct Framing: Equatable {
        var version: HTTPVersion
        var keepAlive: Bool
        /// False for HEAD and for statuses without content (304): the body only sets Content-Length.
        var includesBody: Bool
        /// The body comes from the response's stream, in chunks (HTTP/1.1) or until the connection ends (1.0);
        /// when the state is not `.streaming` by the time it is sent (the server is draining), it ends at once.
        var streams = false
    }

    /// What to do with the handler or the output after an event.
    enum Work: Equatable {
        /// Give this request to the handler; its response comes back through `responseReady`.
        case handle(HTTPRequest)
        /// Write the interim `100 Continue`.
        case writeContinue
        /// Send this response, framed so. It answers the request last handed out when one is in flight, and
        /// is otherwise a final error (unparsable input, or a request too slow to arrive).
        case send(HTTPResponse, Framing)
        /// End the streamed body now (the server is draining): its last chunk, then the connection lingers.
        case endStream
    }

    /// What an event calls for.
    typealias Actions = ConnectionStep<Work>

    struct Configuration: Sendable {
        var limits = HTTPLimits()
        var timeouts = ConnectionTimeouts()
        var maxRequestsPerConnection = 1000
    }
}
