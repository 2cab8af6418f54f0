import HTTPCore
import HTTPServer
import Testing
@testable import chatterd

@Suite struct RequestObserverTests {
    @Test func longPathsAreCut() {
        let short = "/" + String(repeating: "a", count: 255)
        #expect(RequestObserver.loggedPath(short) == short)
        let long = short + "bcdef"
        #expect(RequestObserver.loggedPath(long) == short + "...")
    }

    @Test func theReasonComesOnlyFromOurOwnErrorBodies() {
        #expect(RequestObserver.reason(of: .error(.serviceUnavailable, "server busy")) == "server busy")
        #expect(RequestObserver.reason(of: .json(.ok, Array(#"{"status":"ok"}"#.utf8))) == nil)
        #expect(RequestObserver.reason(of: .json(.internalServerError, Array(#"{"error":"#.utf8))) == nil)
        #expect(RequestObserver.reason(of: HTTPResponse(status: .internalServerError)) == nil)
    }

    @Test func aServerErrorWithoutARecordedCauseNamesTheResponseReason() {
        let pipe = LogPipe()
        let observer = RequestObserver(
            metrics: RequestMetrics(), logger: pipe.logger(level: .error), faults: FaultLedger())
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

    @Test func aClaimedCauseIsLoggedOnceUnderItsRequest() {
        let faults = FaultLedger()
        faults.record("add: StoreError(database connection lost)")
        faults.claim(for: "r1", status: 503)
        faults.record("ping: ignored, the answer was fine")
        faults.claim(for: "r2", status: 200)
        #expect(faults.take(for: "r2") == nil)
        #expect(faults.take(for: "r1") == "add: StoreError(database connection lost)")
        #expect(faults.take(for: "r1") == nil)
    }
}
