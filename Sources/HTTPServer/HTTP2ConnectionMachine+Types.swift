/// The kinds `HTTP2ConnectionMachine` speaks in.
extension HTTP2ConnectionMachine {
    /// What the driver reports beside the timer and the ending.
    enum Work: Equatable {
        /// A GOAWAY with this error code went out (for metrics).
        case goawaySent(UInt32)
    }

    /// What an input calls for.
    typealias Actions = ConnectionStep<Work>

    enum Phase: Equatable {
        /// Waiting for the client's connection preface.
        case awaitingPreface
        case open
        /// GOAWAY sent: streams already started finish, then the connection closes.
        case draining
        /// GOAWAY sent for good: linger once the output is written.
        case closing
        /// After a GOAWAY, everything written: input is dropped until the client closes or the linger deadline.
        /// Closing with the client's bytes unread would reset the connection, and the client could lose the
        /// GOAWAY and the responses before it (RFC 9113 §6.8; RFC 9112 §9.6 for the same with HTTP/1.1).
        case lingering
        case closed
    }

    /// The client connection preface begins with these 24 bytes (RFC 9113 §3.4), then a SETTINGS frame.
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
}
