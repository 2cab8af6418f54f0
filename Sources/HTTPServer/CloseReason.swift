/// Why a connection ended, as `/metrics` counts it (`chatterd_connections_closed_total{reason}`). A connection
/// that lingers after its final response closes with the reason it began lingering for.
public enum CloseReason: String, CaseIterable, Sendable {
    /// The client closed or reset the connection.
    case clientClosed = "client_closed"
    /// The client asked for it (`Connection: close`, HTTP/1.0 without keep-alive), or the request cap was reached.
    case served
    /// A request could not be read (malformed, too large, too slow): its error was the final response.
    case requestError = "request_error"
    /// No request came within the keep-alive (or, for a new connection, the header) deadline.
    case idle
    /// The TLS handshake, or a trusted proxy's PROXY header, failed or did not finish in time.
    case handshake
    /// A trusted proxy named a client that already holds its share of connections.
    case clientLimit = "client_limit"
    /// A response made no progress for the send idle deadline, or left slower than the rate floor.
    case sendStalled = "send_stalled"
    /// The HTTP/2 peer broke the protocol or flooded the connection (the framing layer gave up on it).
    case protocolError = "protocol_error"
    /// The server was shutting down.
    case shutdown
    /// Closed at the connection cap to let a waiting client in (see `ConnectionStanding`).
    case shed
    /// Reading or writing the socket failed.
    case socketError = "socket_error"
}
