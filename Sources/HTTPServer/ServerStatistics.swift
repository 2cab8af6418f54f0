import Locking

/// Counts a server keeps for metrics. Made before the server and handed to it, so whatever renders metrics
/// (a route of the server's own handler, say) reads them without holding the server.
public final class ServerStatistics: Sendable {
    private struct Counts {
        var openConnections = 0
        var openHTTP2Connections = 0
        var openHTTP2Streams = 0
        var goawaysSent: [String: Int] = [:]
        var certificateNotAfter: Double?
        var connectionsRefused: [String: Int] = [:]
        var connectionsShed = 0
        var connectionsClosed: [CloseReason: Int] = [:]
    }
    private let counts = Locked(Counts())

    public init() {}

    /// Client connections open now, whatever their protocol.
    public var openConnections: Int { counts.withLock { $0.openConnections } }
    /// Connections speaking HTTP/2 now.
    public var openHTTP2Connections: Int { counts.withLock { $0.openHTTP2Connections } }
    /// HTTP/2 streams open now, on all connections.
    public var openHTTP2Streams: Int { counts.withLock { $0.openHTTP2Streams } }
    /// GOAWAY frames sent since start, by error code name (RFC 9113 §7): `NO_ERROR` for shutdown, idle
    /// connections and the stream cap; others for protocol errors and floods.
    public var goawaysSent: [String: Int] { counts.withLock { $0.goawaysSent } }

    /// When the serving certificate expires (seconds since 1970); nil on plain HTTP.
    public internal(set) var certificateNotAfter: Double? {
        get { counts.withLock { $0.certificateNotAfter } }
        set { counts.withLock { $0.certificateNotAfter = newValue } }
    }

    /// Connections closed as soon as they were accepted, by reason (`client_connection_limit`).
    public var connectionsRefused: [String: Int] { counts.withLock { $0.connectionsRefused } }

    func connectionRefused(reason: String) { counts.withLock { $0.connectionsRefused[reason, default: 0] += 1 } }

    /// Open connections closed at the connection cap to let a waiting client in (see `ConnectionStanding`).
    public var connectionsShed: Int { counts.withLock { $0.connectionsShed } }

    func connectionShed() { counts.withLock { $0.connectionsShed += 1 } }

    /// Connections closed since start, by why (see `CloseReason`).
    public var connectionsClosed: [CloseReason: Int] { counts.withLock { $0.connectionsClosed } }

    func connectionClosed(because reason: CloseReason) {
        counts.withLock { $0.connectionsClosed[reason, default: 0] += 1 }
    }

    func connectionOpened() { counts.withLock { $0.openConnections += 1 } }
    func connectionClosed() { counts.withLock { $0.openConnections -= 1 } }
    func http2ConnectionOpened() { counts.withLock { $0.openHTTP2Connections += 1 } }
    func http2ConnectionClosed() { counts.withLock { $0.openHTTP2Connections -= 1 } }
    func http2StreamsChanged(by delta: Int) { counts.withLock { $0.openHTTP2Streams += delta } }

    func http2GoawaySent(code: UInt32) {
        let name = HTTP2ErrorCode.name(code)
        counts.withLock { $0.goawaysSent[name, default: 0] += 1 }
    }
}

/// The error codes of RFC 9113 §7, by name.
enum HTTP2ErrorCode {
    static let names = [
        "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
        "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
    ]

    /// The name of `code`, or `UNKNOWN` for a code the RFC does not define.
    static func name(_ code: UInt32) -> String {
        code < names.count ? names[Int(code)] : "UNKNOWN"
    }
}
