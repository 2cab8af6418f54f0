@testable import ChatterdKit
import ChattFeed
import ChattModel
import HTTPCore
import HTTPServer
import Testing
import TestSupport

@Suite struct RequestObserverTests {
    @Test func longPathsAreCut() {
        let short = "/" + String(repeating: "a", count: 255)
        #expect(RequestObserver.loggedPath(short) == short)
        let long = short + "bcdef"
        #expect(RequestObserver.loggedPath(long) == short + "...")
    }

    @Test func errorResponsesCarryTheirReasonAsCauseUntilALowerLayerGivesOne() {
        #expect(HTTPResponse.error(.serviceUnavailable, "server busy").cause == "server busy")
        #expect(HTTPResponse.json(.ok, Array(#"{"status":"ok"}"#.utf8)).cause == nil)
        let unavailable = APIError(.unavailable("add: StoreError(database connection lost)")).response
        #expect(unavailable.cause == "add: StoreError(database connection lost)")
        #expect(!String(decoding: unavailable.body, as: UTF8.self).contains("StoreError"), "the cause is never sent")
    }

    @Test func aServerErrorWithoutARecordedCauseNamesTheResponseReason() {
        let pipe = LogPipe()
        let observer = RequestObserver(
            metrics: RequestMetrics(), logger: pipe.logger(level: .error))
        observer.observe(HTTPExchange(
            request: HTTPRequest(method: .GET, target: "/getmaps", path: "/getmaps"),
            response: .error(.serviceUnavailable, "server busy"), bodyBytes: 25, seconds: 2.1,
            remoteAddress: "[::1]:4000", requestID: "busy-1"))
        observer.observe(HTTPExchange(
            request: nil, response: .error(.notImplemented, "method not implemented"), bodyBytes: 35, seconds: 0,
            remoteAddress: "[::1]:4001", requestID: "bad-1"))
        observer.logger.writer.flush()
        let lines = pipe.lines(2)
        #expect(lines.count == 2)
        #expect(lines.first?.hasSuffix(
            #"request_id=busy-1 method=GET path=/getmaps status=503 cause="server busy""#) == true, "\(lines)")
        #expect(lines.last?.hasSuffix(
            #"request_id=bad-1 method=- path=- status=501 cause="method not implemented""#) == true, "\(lines)")
    }

    @Test func aStaleFeedIsLoggedFromItsMarkNotFromAnAgeHeader() {
        let pipe = LogPipe()
        let observer = RequestObserver(metrics: RequestMetrics(), logger: pipe.logger(level: .warn))
        observer.observe(HTTPExchange(
            request: HTTPRequest(method: .POST, target: "/postmaps", path: "/postmaps"),
            response: .error(.unprocessableContent, "geodata must be a JSON array"), bodyBytes: 45, seconds: 0,
            remoteAddress: "[::1]:4000", requestID: "refused-1"))
        // An Age header and a cause alone (a proxy's, say) are no stale feed of ours.
        var aged = HTTPResponse.json(.ok, Array("[]".utf8))
        aged.headers.add("Age", "3")
        aged.cause = "not a stale feed"
        observer.observe(HTTPExchange(
            request: HTTPRequest(method: .GET, target: "/getmaps", path: "/getmaps"), response: aged,
            bodyBytes: 2, seconds: 0.01, remoteAddress: "[::1]:4001", requestID: "aged-1"))
        var request = HTTPRequest(method: .GET, target: "/getmaps", path: "/getmaps")
        request.requestID = "stale-1"
        observer.staleFeedServed(
            StaleFeed(age: 3, failure: .unavailable("snapshot: StoreError(database connection lost)")), for: request)
        observer.logger.writer.flush()
        // Lines come in order: had the 422 or the aged 200 been logged, its line would be the first.
        let lines = pipe.lines(1)
        #expect(lines.count == 1)
        #expect(lines.first?.hasSuffix(
            #"event=stale_feed_served request_id=stale-1 method=GET path=/getmaps "#
                + #"cause="snapshot: StoreError(database connection lost)""#) == true, "\(lines)")
    }

    @Test func aServerErrorLogsTheCauseItsResponseCarries() {
        let pipe = LogPipe()
        let observer = RequestObserver(metrics: RequestMetrics(), logger: pipe.logger(level: .error))
        var response = HTTPResponse.error(.serviceUnavailable, "database unavailable")
        response.cause = "snapshot: StoreError(database connection lost)"
        observer.observe(HTTPExchange(
            request: HTTPRequest(method: .GET, target: "/getmaps", path: "/getmaps"), response: response,
            bodyBytes: 32, seconds: 0.01, remoteAddress: "[::1]:4000", requestID: "r1"))
        var fine = HTTPResponse.json(.ok, Array("{}".utf8))
        fine.cause = "never logged: the answer was fine"
        observer.observe(HTTPExchange(
            request: HTTPRequest(method: .POST, target: "/postmaps", path: "/postmaps"), response: fine,
            bodyBytes: 2, seconds: 0.01, remoteAddress: "[::1]:4001", requestID: "r2"))
        observer.observe(HTTPExchange(
            request: nil, response: .error(.internalServerError, "internal error"), bodyBytes: 28, seconds: 0,
            remoteAddress: "[::1]:4002", requestID: "r3"))
        observer.logger.writer.flush()
        // The third line is the next error line: none came for the 200 in between.
        let lines = pipe.lines(2)
        #expect(lines.count == 2)
        #expect(lines.first?.hasSuffix(
            #"request_id=r1 method=GET path=/getmaps status=503 cause="snapshot: StoreError(database connection lost)""#)
            == true, "\(lines)")
        #expect(lines.last?.contains("request_id=r3") == true, "\(lines)")
    }
}
