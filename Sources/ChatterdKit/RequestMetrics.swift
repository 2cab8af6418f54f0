import ChattStore
import HTTPServer
import Locking

/// Counts requests by route and status, committed posts and a latency histogram, and renders `/metrics`.
final class RequestMetrics: Sendable {
    /// Histogram bucket upper bounds, in seconds.
    static let bucketBounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
    /// Routes whose 200 means a chatt was committed.
    static let postingRoutes: Set<String> = ["/postmaps", "/postchatt"]

    private struct State {
        var requests: [RouteStatus: Int] = [:]
        var buckets = [Int](repeating: 0, count: RequestMetrics.bucketBounds.count)
        var count = 0
        var sum = 0.0
        var postsCommitted = 0
        var byProtocol: [String: Int] = [:]
    }
    private let state = Locked(State())

    /// Counts one answered request.
    func record(_ exchange: HTTPExchange) {
        let route = Self.label(of: exchange)
        let status = exchange.response.status.code
        let committed = status == 200 && exchange.request?.method == .POST && Self.postingRoutes.contains(route)
        let key = RouteStatus(route: route, status: status)
        let bucket = Self.bucketBounds.firstIndex { exchange.seconds <= $0 }
        state.withLock { state in
            state.requests[key, default: 0] += 1
            if let bucket { state.buckets[bucket] += 1 }
            state.count += 1
            state.sum += exchange.seconds
            if committed { state.postsCommitted += 1 }
            state.byProtocol[exchange.version.name, default: 0] += 1
        }
    }

    /// The route label: the route that answered, "other" for a request no route took (so clients cannot grow the
    /// label set), "invalid" for one that could not be parsed.
    static func label(of exchange: HTTPExchange) -> String {
        exchange.response.route ?? (exchange.request == nil ? "invalid" : "other")
    }

    /// The whole `/metrics` page: these counters plus `gauges`, read by the caller just now.
    func render(_ gauges: MetricsGauges) -> String {
        let snapshot = state.withLock { $0 }
        var page = PrometheusText()
        page.family("chatterd_requests_total", "counter", help: "Requests answered, by route and status.")
        for (key, count) in snapshot.requests.sorted(by: { ($0.key.route, $0.key.status) < ($1.key.route, $1.key.status) }) {
            page.sample("chatterd_requests_total", count, labels: ["route": key.route, "status": String(key.status)])
        }
        let histogram = "chatterd_request_duration_seconds"
        page.family(histogram, "histogram", help: "Time from complete request to queued response.")
        var cumulative = 0
        for (bound, count) in zip(Self.bucketBounds, snapshot.buckets) {
            cumulative += count
            page.sample(histogram + "_bucket", cumulative, labels: ["le": PrometheusText.number(bound)])
        }
        page.sample(histogram + "_bucket", snapshot.count, labels: ["le": "+Inf"])
        page.sample(histogram + "_sum", PrometheusText.number(snapshot.sum))
        page.sample(histogram + "_count", snapshot.count)
        page.single("chatterd_posts_committed_total", "counter", help: "Chatts stored (posts answered 200).",
                    snapshot.postsCommitted)
        page.family("chatterd_requests_by_protocol_total", "counter", help: "Requests answered, by HTTP version.")
        for (version, count) in snapshot.byProtocol.sorted(by: { $0.key < $1.key }) {
            page.sample("chatterd_requests_by_protocol_total", count, labels: ["protocol": version])
        }
        gauges.render(into: &page)
        return page.text
    }
}

/// The labels of `chatterd_requests_total`.
private struct RouteStatus: Hashable {
    var route: String
    var status: Int
}

/// Values `/metrics` reads from their owners at scrape time.
struct MetricsGauges {
    var openConnections: Int
    /// HTTP/2 connections and streams open now, and GOAWAYs sent by reason.
    var http2 = HTTP2Gauges()
    /// When the serving certificate expires (seconds since 1970); nil on plain HTTP leaves the series out.
    var certificateNotAfter: Double?
    /// Connections closed as they were accepted, by reason.
    var connectionsRefused: [String: Int] = [:]
    /// Open connections closed at the cap to let a waiting client in.
    var connectionsShed = 0
    /// Connections closed, by why; every reason is rendered, counted or not.
    var connectionsClosed: [CloseReason: Int] = [:]
    var pool: PGConnectionPool.Stats
    var logLinesDropped: Int
    /// Feed cache hits and misses since start, where a cache exists; nil leaves the two series out.
    var cache: (hits: Int, misses: Int)?
    /// Full reads of the store for the feeds, and starts of the change log, since start; nil leaves them out.
    var changeLog: (fullReads: Int, starts: Int)?
    /// Feed stream subscribers now, where streams are served.
    var streamSubscribers: Int?

    fileprivate func render(into page: inout PrometheusText) {
        page.single("chatterd_open_connections", "gauge", help: "Client connections open now.", openConnections)
        if let certificateNotAfter {
            page.single("chatterd_tls_certificate_expiry_timestamp_seconds", "gauge",
                        help: "When the serving certificate expires, in seconds since 1970.", Int(certificateNotAfter))
        }
        page.family("chatterd_connections_refused_total", "counter",
                    help: "Connections closed as they were accepted, by reason.")
        for (reason, count) in connectionsRefused.sorted(by: { $0.key < $1.key }) {
            page.sample("chatterd_connections_refused_total", count, labels: ["reason": reason])
        }
        page.single("chatterd_connections_shed_total", "counter",
                    help: "Open connections closed at the connection cap to let a waiting client in.", connectionsShed)
        page.family("chatterd_connections_closed_total", "counter", help: "Connections closed, by why.")
        for reason in CloseReason.allCases.sorted(by: { $0.rawValue < $1.rawValue }) {
            page.sample("chatterd_connections_closed_total", connectionsClosed[reason] ?? 0, labels: ["reason": reason.rawValue])
        }
        page.single("chatterd_http2_connections_open", "gauge", help: "Connections speaking HTTP/2 now.",
                    http2.openConnections)
        page.single("chatterd_http2_streams_open", "gauge", help: "HTTP/2 streams open now.", http2.openStreams)
        page.family("chatterd_http2_goaways_sent_total", "counter", help: "HTTP/2 GOAWAY frames sent, by error code.")
        for (reason, count) in http2.goawaysSent.sorted(by: { $0.key < $1.key }) {
            page.sample("chatterd_http2_goaways_sent_total", count, labels: ["reason": reason])
        }
        page.single("chatterd_db_pool_connections", "gauge", help: "Database pool size.", pool.size)
        page.single("chatterd_db_pool_in_use", "gauge", help: "Database connections lent out now.", pool.inUse)
        page.single("chatterd_db_pool_waiting", "gauge", help: "Callers waiting for a database connection.",
                    pool.waiting)
        page.single("chatterd_log_lines_dropped_total", "counter",
                    help: "Log lines dropped because stderr could not keep up.", logLinesDropped)
        if let cache {
            page.single("chatterd_feed_cache_hits_total", "counter", help: "Feed reads served from the cache.",
                        cache.hits)
            page.single("chatterd_feed_cache_misses_total", "counter",
                        help: "Feed reads that had to query the database.", cache.misses)
        }
        if let changeLog {
            page.single("chatterd_feed_full_reads_total", "counter",
                        help: "Feeds read from the store in full, not taken in from the change log.",
                        changeLog.fullReads)
            page.single("chatterd_change_log_starts_total", "counter",
                        help: "Starts of the change log: the first read, then each edit or store that went back.",
                        changeLog.starts)
        }
        if let streamSubscribers {
            page.single("chatterd_stream_subscribers", "gauge", help: "Feed stream subscribers now.",
                        streamSubscribers)
        }
    }
}

/// The HTTP/2 figures of `ServerStatistics`, read at scrape time.
struct HTTP2Gauges {
    var openConnections = 0
    var openStreams = 0
    var goawaysSent: [String: Int] = [:]

    init() {}

    init(_ statistics: ServerStatistics) {
        openConnections = statistics.openHTTP2Connections
        openStreams = statistics.openHTTP2Streams
        goawaysSent = statistics.goawaysSent
    }
}
