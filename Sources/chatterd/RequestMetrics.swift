import HTTPCore
import Locking

/// Counts requests by route and status and keeps a latency histogram, for `/metrics`.
final class RequestMetrics: Sendable {
    /// Histogram bucket upper bounds, in seconds.
    static let bucketBounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
    /// Paths reported by name; anything else is "other", so clients cannot grow the label set.
    static let knownRoutes: Set<String> = [
        "/", "/getmaps", "/postmaps", "/getchatts", "/postchatt", "/healthz", "/readyz", "/metrics",
    ]

    private struct State {
        var requests: [String: Int] = [:]  // "route|status" → count
        var buckets = [Int](repeating: 0, count: RequestMetrics.bucketBounds.count)
        var count = 0
        var sum = 0.0
    }
    private let state = Locked(State())

    func record(_ request: HTTPRequest?, _ response: HTTPResponse, seconds: Double) {
        let key = "\(Self.route(of: request))|\(response.status.code)"
        state.withLock { state in
            state.requests[key, default: 0] += 1
            if let bucket = Self.bucketBounds.firstIndex(where: { seconds <= $0 }) { state.buckets[bucket] += 1 }
            state.count += 1
            state.sum += seconds
        }
    }

    static func route(of request: HTTPRequest?) -> String {
        guard let path = request?.path else { return "invalid" }
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        return knownRoutes.contains(trimmed) ? trimmed : "other"
    }

    /// Prometheus text exposition format (version 0.0.4).
    func render(openConnections: Int, poolSize: Int, poolInUse: Int) -> String {
        let snapshot = state.withLock { $0 }
        var lines = ["# HELP chatterd_requests_total Requests answered, by route and status.",
                     "# TYPE chatterd_requests_total counter"]
        for (key, count) in snapshot.requests.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: "|", maxSplits: 1)
            lines.append("chatterd_requests_total{route=\"\(parts[0])\",status=\"\(parts[1])\"} \(count)")
        }
        lines += ["# HELP chatterd_request_duration_seconds Time from complete request to response.",
                  "# TYPE chatterd_request_duration_seconds histogram"]
        var cumulative = 0
        for (bound, count) in zip(Self.bucketBounds, snapshot.buckets) {
            cumulative += count
            lines.append("chatterd_request_duration_seconds_bucket{le=\"\(bound)\"} \(cumulative)")
        }
        lines.append("chatterd_request_duration_seconds_bucket{le=\"+Inf\"} \(snapshot.count)")
        lines.append("chatterd_request_duration_seconds_sum \(snapshot.sum)")
        lines.append("chatterd_request_duration_seconds_count \(snapshot.count)")
        lines += ["# HELP chatterd_open_connections Client connections open now.",
                  "# TYPE chatterd_open_connections gauge",
                  "chatterd_open_connections \(openConnections)",
                  "# HELP chatterd_db_pool_connections Database pool size.",
                  "# TYPE chatterd_db_pool_connections gauge",
                  "chatterd_db_pool_connections \(poolSize)",
                  "# HELP chatterd_db_pool_in_use Database connections checked out now.",
                  "# TYPE chatterd_db_pool_in_use gauge",
                  "chatterd_db_pool_in_use \(poolInUse)"]
        return lines.joined(separator: "\n") + "\n"
    }
}
