import HTTPCore

/// Everything the server needs to listen and to bound each connection; defaults are docs/API.md's.
public struct ServerConfiguration: Sendable {
    public var host: String = "0.0.0.0"
    public var port: UInt16 = 443
    /// Certificate and key for HTTPS; nil serves plain HTTP (only when configured explicitly).
    public var tls: TLSConfiguration?
    public var limits = HTTPLimits()
    public var timeouts = ConnectionTimeouts()
    /// Requests served on one connection before it is closed.
    public var maxRequestsPerConnection: Int = 1000
    /// Open connections; past this, new ones wait in the listen backlog.
    public var maxConnections: Int = 512
    /// Serial I/O queues; connections are spread across them round-robin.
    public var ioQueueCount: Int = 2
    public var listenBacklog: Int32 = 1024
    /// Output the kernel may hold unsent for one connection (TCP_NOTSENT_LOWAT); past it a write blocks. Without
    /// it Linux grows a socket's send buffer to megabytes (on loopback it took three whole /getmaps, 500 KB, for a
    /// reader taking 6 bytes a second), so a slow reader's connection looked idle, never blocked, and the rate
    /// floor and send deadline never saw it. Bytes sent and awaiting acknowledgement are not counted, so this
    /// does not limit throughput on a long fat link.
    public var maxUnsentBytesPerConnection = 64 * 1024
    /// Sets SO_REUSEPORT, so several processes (each with this set) can listen on the same port.
    public var reusePort = false
    /// HTTP/2's own limits; the request limits above apply to each HTTP/2 stream too.
    public var http2 = HTTP2Configuration()
    /// Peers whose PROXY protocol header (before anything else on a connection) or `X-Forwarded-For` names
    /// the client; from anyone else both are ignored, and the peer is the client.
    public var trustedProxies: [AddressRange] = []
    /// Whether the trusted proxies end TLS themselves and open a new TLS connection to us, so that on the TLS
    /// listener an `X-Forwarded-For` is theirs. A proxy that passes TLS through cannot add one: there the
    /// header is whatever the client wrote, and only the proxy's PROXY header names the client.
    public var trustedProxyTerminatesTLS = false
    /// Connections one client (see `ClientGroup`) may hold open; nil for no limit. A trusted proxy that forwards
    /// many clients over its connections without PROXY headers is not limited (its clients cannot be told apart).
    public var maxConnectionsPerClient: Int?
    /// The IPv6 prefix that counts as one client for the per-client limits (see `ClientGroup`).
    public var ipv6ClientPrefixLength = 64

    /// The client `address` is counted as by the per-client limits.
    func clientGroup(of address: IPAddress) -> ClientGroup {
        ClientGroup(address, ipv6PrefixLength: ipv6ClientPrefixLength)
    }

    /// The proxies whose `X-Forwarded-For` names the client on a trusted proxy's connection that began without a
    /// PROXY header: every trusted proxy on plain HTTP (an HTTP proxy writes the header itself), on TLS only
    /// when they terminate TLS; otherwise none, and the proxy is the client.
    var forwardedForProxies: [AddressRange] {
        tls == nil || trustedProxyTerminatesTLS ? trustedProxies : []
    }

    public init() {}
}

/// HTTP/2 (RFC 9113): whether it is offered, and the limits that keep one connection from costing the server
/// more than its share. Each is a named defence against a known attack on HTTP/2 servers.
public struct HTTP2Configuration: Sendable {
    /// Offer `h2` in ALPN (preferred over `http/1.1`), and accept it with prior knowledge on plain HTTP.
    public var enabled = true
    /// SETTINGS_MAX_CONCURRENT_STREAMS: streams a client may have open at once.
    public var maxConcurrentStreams: UInt32 = 100
    /// Client RST_STREAM frames allowed at once, refilled at `resetsPerSecond`; past that, GOAWAY. Opening and
    /// resetting streams as fast as possible starts handler work without limit ("rapid reset", CVE-2023-44487).
    public var resetBurst: UInt64 = 100
    public var resetsPerSecond: UInt64 = 10
    /// CONTINUATION frames allowed after one HEADERS frame; past that, GOAWAY. Endless CONTINUATION frames
    /// make a server buffer or decode without end (CVE-2024-28182).
    public var maxContinuations = 8
    /// Entries allowed in one SETTINGS frame; past that, GOAWAY.
    public var maxSettingsEntries = 32
    /// PING and SETTINGS acknowledgements queued for a client that does not read them; past that, the
    /// connection closes (a PING or SETTINGS flood).
    public var maxQueuedAcks = 100
    /// Request bodies one connection may hold while they arrive, in `HTTPLimits.maxBodyBytes` each (HTTP/1.1
    /// holds at most one). A stream whose DATA would pass it is refused with REFUSED_STREAM, which tells the client
    /// nothing of it was processed (RFC 9113 §8.7), so it may send it again; without it a connection's 100 streams
    /// could hold 100 bodies.
    public var maxBufferedBodies = 4
    /// Output queued for one connection before no more frames are made, so a slow reader holds at most this
    /// much of copied frames (response bodies are shared, never copied per stream).
    public var maxQueuedOutputBytes = 256 * 1024

    public init() {}
}

/// Certificate chain and private key files (PEM).
public struct TLSConfiguration: Sendable {
    public var certificatePath: String
    public var privateKeyPath: String

    public init(certificatePath: String, privateKeyPath: String) {
        self.certificatePath = certificatePath
        self.privateKeyPath = privateKeyPath
    }
}

/// Per-connection deadlines, in seconds.
public struct ConnectionTimeouts: Sendable {
    /// From accept to a completed TLS handshake.
    public var handshakeSeconds: Double = 10
    /// For a whole request head, from its first byte (and for the first byte on a new connection).
    public var headerSeconds: Double = 10
    /// Longest gap between body bytes.
    public var bodyIdleSeconds: Double = 10
    /// Longest time a response write makes no progress.
    public var sendIdleSeconds: Double = 30
    /// Longest wait for the next request on a kept-alive connection.
    public var keepAliveIdleSeconds: Double = 60
    /// How long unread input is drained after an error response before closing (RFC 9112 §9.6).
    public var lingerSeconds: Double = 5
    /// The slowest an HTTP/1.1 request (head or body) may arrive, and a response (an HTTP/2 connection's output)
    /// leave once the socket is full, in bytes per second averaged over `rateWindowSeconds`; 0 turns the floor off. A client that sends or reads
    /// a few bytes now and then (slowloris, slow body, slow read) is cut off after a window instead of holding
    /// its connection for as long as each trickle keeps the idle timeouts away. A head that arrives whole at
    /// once, as every real client's does, is never measured.
    public var minimumBytesPerSecond: Double = 500
    /// The window the rate floor is measured over.
    public var rateWindowSeconds: Double = 5
    /// How long a connection must have been idle, or slower than the floor, before it may be closed at the
    /// connection cap to let a waiting client in (see `ConnectionStanding`).
    public var sheddableAfterSeconds: Double = 1

    /// The bytes a window must carry to meet the floor; nil when the floor is off.
    var minimumBytesPerWindow: Double? {
        minimumBytesPerSecond > 0 ? minimumBytesPerSecond * rateWindowSeconds : nil
    }

    public init() {}
}
