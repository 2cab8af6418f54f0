import ChattModel
import HTTPCore
import Locking

/// At most `postsPerSecond` posts per second from one client (an IPv4 address, or an IPv6 prefix: see
/// `ClientGroup`), with bursts of up to `burst`: a token bucket per client. A refused post gets 429 before any
/// database work, so nothing of it is stored.
public final class PostRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updatedAt: Double
    }

    private let rate: Double
    private let burst: Double
    private let maxClients: Int
    private let now: @Sendable () -> Double
    private let buckets = Locked([ClientGroup: Bucket]())

    /// - Parameters:
    ///   - postsPerSecond: the sustained rate each client may post at.
    ///   - burst: posts a client may make at once after being quiet.
    ///   - maxClients: clients tracked at most; past that, those with a full bucket (quiet ones) are
    ///     forgotten, and if that is not enough, all are, so many clients cannot grow memory without end.
    ///   - now: a monotonic clock in seconds (injected by tests).
    public init(
        postsPerSecond: Double, burst: Int, maxClients: Int = 100_000,
        now: @escaping @Sendable () -> Double = PostRateLimiter.monotonicSeconds
    ) {
        precondition(postsPerSecond > 0 && burst >= 1, "a post rate limit allows some posts")
        rate = postsPerSecond
        self.burst = Double(burst)
        self.maxClients = maxClients
        self.now = now
    }

    /// Takes one post's token for `client`: nil when the post may go ahead, else the seconds until it could.
    public func admit(_ client: ClientGroup) -> Double? {
        let time = now()
        return buckets.withLock { buckets in
            var bucket = buckets[client] ?? Bucket(tokens: burst, updatedAt: time)
            bucket.tokens = min(burst, bucket.tokens + (time - bucket.updatedAt) * rate)
            bucket.updatedAt = time
            defer { buckets[client] = bucket }
            guard bucket.tokens >= 1 else { return (1 - bucket.tokens) / rate }
            bucket.tokens -= 1
            if buckets.count >= maxClients, buckets[client] == nil { forgetQuiet(&buckets, at: time) }
            return nil
        }
    }

    /// The answer to a refused post: 429 with `Retry-After` in whole seconds, rounded up.
    static func refusal(waiting seconds: Double) -> HTTPResponse {
        let retry = max(1, Int(seconds.rounded(.up)))
        return APIError(
            .tooManyRequests, "too many posts from this address", headers: HTTPHeaders([("Retry-After", String(retry))])
        ).response
    }

    private func forgetQuiet(_ buckets: inout [ClientGroup: Bucket], at time: Double) {
        buckets = buckets.filter { $0.value.tokens + (time - $0.value.updatedAt) * rate < burst }
        if buckets.count >= maxClients { buckets.removeAll() }
    }

    /// Seconds on the continuous clock.
    @Sendable public static func monotonicSeconds() -> Double {
        let components = origin.duration(to: .now).components
        return Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    private static let origin = ContinuousClock.now
}
