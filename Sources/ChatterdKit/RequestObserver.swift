import ChattFeed
import HTTPCore
import HTTPServer
import Logging

/// What happens once each response is made: metrics, one access line at info, for every 5xx one error line naming
/// the cause, and for every stale feed served one warning naming the failure. Only the request line's path is
/// logged (no query string), never a body or header value.
struct RequestObserver: Sendable {
    let metrics: RequestMetrics
    let logger: Logger
    /// Paths longer than this are cut in logs; the full request line can be 8 KiB.
    static let maxLoggedPathBytes = 256

    /// Records `exchange`; runs on an I/O queue, so it only formats and queues lines.
    func observe(_ exchange: HTTPExchange) {
        metrics.record(exchange)
        let status = exchange.response.status.code
        if var line = logger.line(.info, "request") {
            describe(exchange, in: &line)
            line.string("remote", exchange.remoteAddress)
            line.integer("status", status)
            line.integer("bytes", exchange.bodyBytes)
            line.thousandths("duration_ms", exchange.seconds * 1000)
            line.string("proto", exchange.version.name)
            logger.emit(&line)
        }
        if status >= 500, var line = logger.line(.error, "request_failed") {
            describe(exchange, in: &line)
            line.integer("status", status)
            line.string("cause", exchange.response.cause ?? exchange.response.status.reason)
            logger.emit(&line)
        }
    }

    /// Records that `request` is answered with a stale feed (`--stale-if-error`): one warning naming the failure
    /// it stands in for. Called as the response is made, before `observe` sees it.
    func staleFeedServed(_ stale: StaleFeed, for request: HTTPRequest) {
        guard var line = logger.line(.warn, "stale_feed_served") else { return }
        describe(request, id: request.requestID, in: &line)
        line.string("cause", stale.failure.detail)
        logger.emit(&line)
    }

    private func describe(_ exchange: HTTPExchange, in line: inout LogLine) {
        describe(exchange.request, id: exchange.requestID, in: &line)
    }

    private func describe(_ request: HTTPRequest?, id: String?, in line: inout LogLine) {
        line.string("request_id", id ?? "-")
        line.string("method", request?.method.rawValue ?? "-")
        line.string("path", request.map { Self.loggedPath($0.path) } ?? "-")
    }

    /// `path` cut to `maxLoggedPathBytes` (paths are ASCII: the decoder refuses anything else in a target).
    static func loggedPath(_ path: String) -> String {
        guard path.utf8.count > maxLoggedPathBytes else { return path }
        return String(decoding: path.utf8.prefix(maxLoggedPathBytes), as: UTF8.self) + "..."
    }
}
