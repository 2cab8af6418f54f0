import ChattAPI
@testable import ChatterdKit
@testable import ChattStore
import HTTPCore
import HTTPServer
import Testing

@Suite struct RequestMetricsTests {
    private let idle = MetricsGauges(
        openConnections: 3, pool: PGConnectionPool.Stats(size: 8, inUse: 2, idle: 5, waiting: 1), logLinesDropped: 4)

    private func exchange(
        _ method: HTTPMethod, _ path: String, _ status: HTTPStatus, seconds: Double = 0.002
    ) -> HTTPExchange {
        // Labelled as the router labels it: by the route the path names.
        var response = HTTPResponse(status: status)
        response.route = ChattRoute(path: path)?.rawValue
        return HTTPExchange(
            request: HTTPRequest(method: method, target: path, path: path), response: response,
            bodyBytes: 0, seconds: seconds, remoteAddress: "127.0.0.1:1", requestID: "r")
    }

    @Test func thePageParsesAndDeclaresEveryFamily() throws {
        let metrics = RequestMetrics()
        metrics.record(exchange(.GET, "/getmaps", .ok))
        let page = try Exposition(metrics.render(idle))
        let expected: [String: String] = [
            "chatterd_requests_total": "counter", "chatterd_request_duration_seconds": "histogram",
            "chatterd_posts_committed_total": "counter", "chatterd_open_connections": "gauge",
            "chatterd_db_pool_connections": "gauge", "chatterd_db_pool_in_use": "gauge",
            "chatterd_db_pool_waiting": "gauge", "chatterd_log_lines_dropped_total": "counter",
            "chatterd_requests_by_protocol_total": "counter", "chatterd_http2_connections_open": "gauge",
            "chatterd_connections_refused_total": "counter", "chatterd_connections_shed_total": "counter",
            "chatterd_http2_streams_open": "gauge", "chatterd_http2_goaways_sent_total": "counter",
            "chatterd_connections_closed_total": "counter",
        ]
        #expect(page.families.mapValues { $0.type ?? "?" } == expected)
        #expect(page.families.values.allSatisfy { $0.help?.isEmpty == false })
        #expect(page.value("chatterd_open_connections") == 3)
        #expect(page.value("chatterd_db_pool_connections") == 8)
        #expect(page.value("chatterd_db_pool_in_use") == 2)
        #expect(page.value("chatterd_db_pool_waiting") == 1)
        #expect(page.value("chatterd_log_lines_dropped_total") == 4)
    }

    @Test func countersMoveWithRequests() throws {
        let metrics = RequestMetrics()
        let before = try Exposition(metrics.render(idle))
        #expect(before.value("chatterd_requests_total", ["route": "/getmaps", "status": "200"]) == nil)
        #expect(before.value("chatterd_request_duration_seconds_count") == 0)
        for _ in 0..<3 { metrics.record(exchange(.GET, "/getmaps", .ok)) }
        metrics.record(exchange(.GET, "/getmaps/", .serviceUnavailable, seconds: 3))
        let after = try Exposition(metrics.render(idle))
        #expect(after.value("chatterd_requests_total", ["route": "/getmaps", "status": "200"]) == 3)
        #expect(after.value("chatterd_requests_total", ["route": "/getmaps", "status": "503"]) == 1)
        #expect(after.value("chatterd_request_duration_seconds_count") == 4)
        #expect(after.value("chatterd_request_duration_seconds_bucket", ["le": "0.0025"]) == 3)
        #expect(after.value("chatterd_request_duration_seconds_bucket", ["le": "2.5"]) == 3)
        #expect(after.value("chatterd_request_duration_seconds_bucket", ["le": "5.0"]) == 4)
        #expect(after.value("chatterd_request_duration_seconds_bucket", ["le": "+Inf"]) == 4)
        #expect(abs((after.value("chatterd_request_duration_seconds_sum") ?? 0) - 3.006) < 1e-9)
    }

    @Test func histogramBucketsAreCumulative() throws {
        let metrics = RequestMetrics()
        for seconds in [0.0001, 0.003, 0.03, 0.3, 3, 30] { metrics.record(exchange(.GET, "/", .ok, seconds: seconds)) }
        let page = try Exposition(metrics.render(idle))
        let buckets = try #require(page.families["chatterd_request_duration_seconds"]?.samples)
            .filter { $0.name.hasSuffix("_bucket") }
        #expect(buckets.count == RequestMetrics.bucketBounds.count + 1)
        #expect(zip(buckets, buckets.dropFirst()).allSatisfy { $0.value <= $1.value })
        #expect(buckets.last?.labels == ["le": "+Inf"] && buckets.last?.value == 6)
        #expect(page.value("chatterd_request_duration_seconds_bucket", ["le": "5.0"]) == 5)
    }

    @Test func onlyAnsweredPostsCountAsCommitted() throws {
        let metrics = RequestMetrics()
        metrics.record(exchange(.POST, "/postmaps", .ok))
        metrics.record(exchange(.POST, "/postchatt/", .ok))
        metrics.record(exchange(.POST, "/postchatt", .serviceUnavailable))
        metrics.record(exchange(.POST, "/postmaps", .unprocessableContent))
        metrics.record(exchange(.GET, "/postmaps", .methodNotAllowed))
        metrics.record(exchange(.POST, "/getmaps", .ok))
        let page = try Exposition(metrics.render(idle))
        #expect(page.value("chatterd_posts_committed_total") == 2)
    }

    @Test func unknownAndUnparsablePathsShareOneLabel() throws {
        let metrics = RequestMetrics()
        for path in ["/a", "/b", "/getmaps/x", "//"] { metrics.record(exchange(.GET, path, .notFound)) }
        metrics.record(HTTPExchange(
            request: nil, response: HTTPResponse(status: .badRequest), bodyBytes: 0, seconds: 0,
            remoteAddress: "-", requestID: "r"))
        let page = try Exposition(metrics.render(idle))
        #expect(page.value("chatterd_requests_total", ["route": "other", "status": "404"]) == 4)
        #expect(page.value("chatterd_requests_total", ["route": "invalid", "status": "400"]) == 1)
        #expect(page.families["chatterd_requests_total"]?.samples.count == 2)
    }

    @Test func requestsAreCountedByProtocolAndHTTP2FiguresAreShown() throws {
        let metrics = RequestMetrics()
        metrics.record(exchange(.GET, "/getmaps", .ok))
        var overHTTP2 = exchange(.GET, "/getmaps", .ok)
        overHTTP2.version = .http2
        metrics.record(overHTTP2)
        metrics.record(overHTTP2)
        var gauges = idle
        gauges.http2.openConnections = 2
        gauges.http2.openStreams = 7
        gauges.http2.goawaysSent = ["NO_ERROR": 3, "ENHANCE_YOUR_CALM": 1]
        gauges.connectionsRefused = ["client_connection_limit": 4]
        gauges.connectionsShed = 5
        gauges.connectionsClosed = [.idle: 6, .sendStalled: 2]
        let page = try Exposition(metrics.render(gauges))
        #expect(page.value("chatterd_requests_by_protocol_total", ["protocol": "HTTP/1.1"]) == 1)
        #expect(page.value("chatterd_requests_by_protocol_total", ["protocol": "HTTP/2"]) == 2)
        #expect(page.value("chatterd_requests_total", ["route": "/getmaps", "status": "200"]) == 3, "one series for both")
        #expect(page.value("chatterd_http2_connections_open") == 2)
        #expect(page.value("chatterd_http2_streams_open") == 7)
        #expect(page.value("chatterd_http2_goaways_sent_total", ["reason": "NO_ERROR"]) == 3)
        #expect(page.value("chatterd_http2_goaways_sent_total", ["reason": "ENHANCE_YOUR_CALM"]) == 1)
        #expect(page.value("chatterd_connections_refused_total", ["reason": "client_connection_limit"]) == 4)
        #expect(page.value("chatterd_connections_shed_total") == 5)
        #expect(page.value("chatterd_connections_closed_total", ["reason": "idle"]) == 6)
        #expect(page.value("chatterd_connections_closed_total", ["reason": "send_stalled"]) == 2)
        #expect(page.value("chatterd_connections_closed_total", ["reason": "protocol_error"]) == 0, "every reason")
        #expect(page.families["chatterd_connections_closed_total"]?.samples.count == CloseReason.allCases.count)
    }

    @Test func cacheSeriesAppearOnlyWithACache() throws {
        let metrics = RequestMetrics()
        #expect(try Exposition(metrics.render(idle)).families["chatterd_feed_cache_hits_total"] == nil)
        var gauges = idle
        gauges.cache = (hits: 10, misses: 2)
        let page = try Exposition(metrics.render(gauges))
        #expect(page.value("chatterd_feed_cache_hits_total") == 10)
        #expect(page.value("chatterd_feed_cache_misses_total") == 2)
        #expect(page.families["chatterd_feed_cache_misses_total"]?.type == "counter")
    }

    @Test func changeLogSeriesAppearOnlyWithAChangeLog() throws {
        let metrics = RequestMetrics()
        #expect(try Exposition(metrics.render(idle)).families["chatterd_feed_full_reads_total"] == nil)
        var gauges = idle
        gauges.changeLog = (fullReads: 3, starts: 2)
        let page = try Exposition(metrics.render(gauges))
        #expect(page.value("chatterd_feed_full_reads_total") == 3)
        #expect(page.value("chatterd_change_log_starts_total") == 2)
        #expect(page.families["chatterd_change_log_starts_total"]?.type == "counter")
    }

    @Test func theReadmeTableListsEveryFamilyWithItsTypeAndNoOther() throws {
        var gauges = idle
        gauges.cache = (hits: 0, misses: 0)
        gauges.changeLog = (fullReads: 0, starts: 0)
        gauges.certificateNotAfter = 0
        let families = try Exposition(RequestMetrics().render(gauges)).families
        for (name, family) in families.sorted(by: { $0.key < $1.key }) {
            let rows = Readme.tableRows(mentioning: name)
            #expect(rows.count == 1, "README.md's metrics table has \(rows.count) rows for \(name)")
            #expect(rows.first?[1] == family.type, "README.md gives \(name) as \(rows.first?[1] ?? "-")")
        }
        let documented = Readme.text.split(separator: "\n").filter { $0.hasPrefix("| `chatterd_") }
            .compactMap { $0.split(separator: "`").dropFirst().first?.prefix { $0 != "{" } }.map(String.init)
        #expect(Set(documented) == Set(families.keys), "README.md's metrics table lists families /metrics lacks")
    }

    @Test func labelValuesAndHelpAreEscaped() throws {
        var page = PrometheusText()
        page.family("x_total", "counter", help: "a \\ b\nc")
        page.sample("x_total", 1, labels: ["path": "q\"u\\o\nte"])
        #expect(page.text == "# HELP x_total a \\\\ b\\nc\n# TYPE x_total counter\nx_total{path=\"q\\\"u\\\\o\\nte\"} 1\n")
        #expect(try Exposition(page.text).value("x_total", ["path": "q\"u\\onte"]) == 1)
    }

    @Test func theParserRejectsMalformedPages() {
        for text in ["x 1", "# TYPE x counter\nx{a=\"1\" 1\n", "# TYPE x counter\ny 1\n", "# TYPE x counter\nx one\n",
                     "# TYPE x gauge\n# TYPE x gauge\nx 1\n"] {
            #expect(throws: Exposition.Malformed.self, "\(text)") { try Exposition(text) }
        }
    }
}
