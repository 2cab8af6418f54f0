import ChattAPI
@testable import ChatterdKit
import ChattFeed
import ChattModel
@testable import ChattStore
import TestSupport
import Dispatch
import Foundation
import HTTPServer
import Logging
import Testing

/// chatterd's own wiring (`Chatterd.makeServer`) over a stub repository, on a loopback port, logging into a pipe.
final class ServedChatterd {
    let repository = InMemoryChattRepository()
    let pipe = LogPipe()
    let server: Server
    let client: LoopbackClient

    init(format: LogFormat, staleIfError: Duration = .zero) throws {
        var options = ServeOptions()
        options.server.host = "127.0.0.1"
        options.server.port = 0
        options.plainHTTP = true
        options.poolSize = 2
        let stats = PGConnectionPool.Stats(size: 2, inUse: 0, idle: 2)
        server = Chatterd.makeServer(
            options, feed: ChattFeed(repository: repository, staleIfError: staleIfError), poolStats: { stats },
            logger: pipe.logger(level: .info, format: format))
        client = LoopbackClient(port: try server.start())
    }

    deinit {
        let done = DispatchSemaphore(value: 0)
        server.shutdown(deadlineSeconds: 2) { done.signal() }
        done.wait()
    }
}

@Suite struct ServedObservabilityTests {
    let served: ServedChatterd
    var repository: InMemoryChattRepository { served.repository }
    var pipe: LogPipe { served.pipe }
    var client: LoopbackClient { served.client }

    init() throws {
        served = try ServedChatterd(format: .logfmt)
    }

    /// Log lines until one contains `marker`.
    private func lines(through marker: String) -> [String] {
        var lines: [String] = []
        while let line = pipe.lines(1).first {
            lines.append(line)
            if line.contains(marker) { break }
        }
        return lines
    }

    @Test func everyRequestGetsOneAccessLineWithItsFields() throws {
        let response = try client.request("GET", "/healthz", headers: [("X-Request-Id", "trace-42.a:b_c")])
        #expect(response.status == 200 && response.header("X-Request-Id") == "trace-42.a:b_c")
        let line = try #require(lines(through: "request_id=trace-42.a:b_c").last)
        let pattern = try Regex(
            #"time=\S+Z level=info event=request request_id=trace-42.a:b_c method=GET path=/healthz "#
                + #"remote=127\.0\.0\.1:\d+ status=200 bytes=15 duration_ms=\d+\.\d{3} proto=HTTP/1\.1"#)
        #expect(line.wholeMatch(of: pattern) != nil, "\(line)")
    }

    @Test(arguments: ["has space", String(repeating: "a", count: 65), "quote\"d", "semi;colon", ""])
    func unsafeRequestIDsAreReplaced(given: String) throws {
        let response = try client.request("GET", "/", headers: [("X-Request-Id", given)])
        let id = try #require(response.header("X-Request-Id"))
        #expect(id != given && id.wholeMatch(of: #/[0-9a-f]{8}-[0-9a-f]+-\d+/#) != nil, "\(id)")
        #expect(lines(through: "request_id=\(id) ").last?.contains("path=/ ") == true)
    }

    @Test func queryStringsAndBodiesStayOutOfTheLog() throws {
        #expect(try client.request("GET", "/getmaps?token=SECRET-QUERY", headers: [("X-Request-Id", "q1")]).status == 200)
        let posted = try client.request(
            "POST", "/postchatt", headers: [("X-Request-Id", "p1"), ("Authorization", "Bearer SECRET-HEADER")],
            body: #"{"name":"n","message":"SECRET-BODY"}"#)
        #expect(posted.status == 200)
        let logged = lines(through: "request_id=p1").joined(separator: "\n")
        #expect(logged.contains("request_id=q1 method=GET path=/getmaps "))
        #expect(logged.contains("request_id=p1 method=POST path=/postchatt "))
        for secret in ["SECRET-QUERY", "SECRET-BODY", "SECRET-HEADER", "token"] { #expect(!logged.contains(secret)) }
    }

    @Test func aServerErrorGetsAnErrorLineNamingItsCause() throws {
        repository.fail(with: .unavailable("StoreError(database connection failed: connection refused)"))
        defer { repository.fail(with: nil) }
        let response = try client.request("GET", "/getchatts", headers: [("X-Request-Id", "e1")])
        #expect(response.status == 503)
        #expect(!response.body.contains("refused"), "the cause is for the log, not the client")
        let logged = lines(through: "event=request_failed")
        let error = try #require(logged.last)
        #expect(error.contains(#"level=error event=request_failed request_id=e1 method=GET path=/getchatts status=503 cause="#))
        #expect(error.contains("connection refused"), "\(error)")
        #expect(logged.contains { $0.contains("event=request request_id=e1") && $0.contains("status=503") })
    }

    @Test func aClientErrorIsOnlyAnAccessLine() throws {
        #expect(try client.request("POST", "/postchatt", headers: [("X-Request-Id", "c1")], body: "{").status == 422)
        #expect(try client.request("GET", "/", headers: [("X-Request-Id", "c2")]).status == 200)
        let logged = lines(through: "request_id=c2")
        #expect(logged.contains { $0.contains("request_id=c1") && $0.contains("status=422") })
        #expect(!logged.contains { $0.contains("level=error") })
    }

    @Test func metricsCountServedRequests() throws {
        func scrape() throws -> Exposition {
            let response = try client.request("GET", "/metrics")
            #expect(response.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
            return try Exposition(response.body)
        }
        let before = try scrape()
        let healthz = ["route": "/healthz", "status": "200"]
        for _ in 0..<3 { _ = try client.request("GET", "/healthz") }
        _ = try client.request("POST", "/postmaps", body: #"{"name":"n","message":"m","geodata":null}"#)
        let after = try scrape()
        #expect(after.value("chatterd_requests_total", healthz) == (before.value("chatterd_requests_total", healthz) ?? 0) + 3)
        #expect(after.value("chatterd_posts_committed_total") == (before.value("chatterd_posts_committed_total") ?? -1) + 1)
        let count = "chatterd_request_duration_seconds_count"
        #expect(after.value(count) == (before.value(count) ?? -1) + 5)
        #expect((after.value("chatterd_open_connections") ?? 0) >= 1, "the scraping connection is open")
        #expect(after.value("chatterd_db_pool_connections") == 2)
        #expect(after.value("chatterd_log_lines_dropped_total") == 0)
    }
}

/// The same wiring logging JSON.
@Suite struct ServedJSONLogTests {
    @Test func accessLinesAreJSONObjects() throws {
        let served = try ServedChatterd(format: .json)
        _ = try served.client.request("HEAD", "/getmaps?x=1", headers: [("X-Request-Id", "j1")])
        let line = try #require(served.pipe.lines(1).first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["event"] as? String == "request" && object["level"] as? String == "info")
        #expect(object["request_id"] as? String == "j1" && object["method"] as? String == "HEAD")
        #expect(object["path"] as? String == "/getmaps" && object["status"] as? Int == 200)
        #expect(object["bytes"] as? Int == 0, "HEAD sends no body")
        #expect((object["remote"] as? String)?.hasPrefix("127.0.0.1:") == true)
        #expect(object["duration_ms"] is Double && object["time"] is String)
    }
}

/// The same wiring with `--stale-if-error`: the feed's typed mark reaches the observer.
@Suite struct ServedStaleFeedTests {
    @Test func aStaleFeedGetsAgeAndOneWarningNamingTheFailure() throws {
        let served = try ServedChatterd(format: .logfmt, staleIfError: .seconds(60))
        #expect(try served.client.request("GET", "/getmaps", headers: [("X-Request-Id", "s0")]).status == 200)
        served.repository.fail(with: .unavailable("StoreError(database connection lost)"))
        let stale = try served.client.request("GET", "/getmaps", headers: [("X-Request-Id", "s1")])
        #expect(stale.status == 200 && stale.header("Age") != nil)
        var logged: [String] = []
        while let line = served.pipe.lines(1).first {
            logged.append(line)
            if line.contains("event=request request_id=s1") { break }
        }
        let warnings = logged.filter { $0.contains("event=stale_feed_served") }
        #expect(warnings.count == 1, "\(logged)")
        #expect(warnings.first?.hasSuffix(
            #"level=warn event=stale_feed_served request_id=s1 method=GET path=/getmaps "#
                + #"cause="StoreError(database connection lost)""#) == true, "\(warnings)")
    }
}
