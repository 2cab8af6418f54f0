@testable import ChattAPI
import ChattModel
import HTTPCore
import Locking
import TestSupport
import Testing

/// Posts per client address, on a made-up clock.
@Suite struct PostRateLimiterTests {
    /// A clock the test moves by hand.
    final class ManualClock: Sendable {
        private let seconds = Locked(100.0)
        func advance(_ by: Double) { seconds.withLock { $0 += by } }
        var now: Double { seconds.withLock { $0 } }
    }

    @Test func aBurstThenTheSustainedRate() {
        let clock = ManualClock()
        let limiter = PostRateLimiter(postsPerSecond: 2, burst: 3, now: { clock.now })
        #expect((0..<3).map { _ in limiter.admit("10.0.0.1") } == [nil, nil, nil], "the burst")
        let wait = limiter.admit("10.0.0.1")
        #expect(wait == 0.5, "one token refills in half a second")
        clock.advance(0.49)
        #expect(limiter.admit("10.0.0.1") != nil)
        clock.advance(0.02)
        #expect(limiter.admit("10.0.0.1") == nil)
        #expect(limiter.admit("10.0.0.1") != nil)
    }

    @Test func addressesAreCountedApart() {
        let clock = ManualClock()
        let limiter = PostRateLimiter(postsPerSecond: 1, burst: 1, now: { clock.now })
        #expect(limiter.admit("10.0.0.1") == nil)
        #expect(limiter.admit("10.0.0.1") != nil)
        #expect(limiter.admit("10.0.0.2") == nil, "another client is not held back")
    }

    @Test func aQuietAddressRefillsToTheBurstOnly() {
        let clock = ManualClock()
        let limiter = PostRateLimiter(postsPerSecond: 10, burst: 2, now: { clock.now })
        _ = limiter.admit("a")
        clock.advance(3600)
        #expect((0..<3).map { _ in limiter.admit("a") != nil } == [false, false, true])
    }

    @Test func manyAddressesDoNotGrowTheTableWithoutEnd() {
        let clock = ManualClock()
        let limiter = PostRateLimiter(postsPerSecond: 1, burst: 1, maxClients: 100, now: { clock.now })
        for index in 0..<10_000 { _ = limiter.admit("10.0.\(index / 256).\(index % 256)") }
        clock.advance(10)
        // Past the bound, full buckets are forgotten: a forgotten address starts with a full burst again.
        #expect(limiter.admit("10.0.0.0") == nil)
    }

    @Test func theRouterRefusesAPostPastTheRateWith429AndStoresNothing() throws {
        let clock = ManualClock()
        let repository = InMemoryChattRepository()
        let router = ChattRouter(
            repository: repository, postLimit: PostRateLimiter(postsPerSecond: 1, burst: 1, now: { clock.now }))
        var post = HTTPRequest(method: .POST, target: "/postmaps", path: "/postmaps",
                               body: Array(#"{"name":"a","message":"b"}"#.utf8))
        post.clientAddress = "192.0.2.7"
        #expect(router.respond(to: post).status == .ok)
        let refused = try #require(router.respondImmediately(to: post), "refused on the I/O queue")
        #expect(refused.status == .tooManyRequests)
        #expect(refused.headers["Retry-After"] == "1")
        #expect(String(decoding: refused.body, as: UTF8.self) == #"{"error":"too many posts from this address"}"#)
        #expect(refused.route == "/postmaps")
        #expect(repository.chatts.count == 1, "nothing stored for the refused post")
        var other = post
        other.clientAddress = "192.0.2.8"
        #expect(router.respond(to: other).status == .ok)
        clock.advance(1)
        #expect(router.respond(to: post).status == .ok)
        #expect(repository.chatts.count == 3)
        // Reads are never limited.
        var read = HTTPRequest(method: .GET, target: "/getmaps", path: "/getmaps")
        read.clientAddress = "192.0.2.7"
        for _ in 0..<5 { #expect(router.respond(to: read).status == .ok) }
    }
}
