@testable import ChattAPI
import ChattFeed
import ChattModel
import HTTPCore
import Locking
import TestSupport
import Testing

/// Posts per client (an IPv4 address, an IPv6 /64), on a made-up clock.
@Suite struct PostRateLimiterTests {
    /// A clock the test moves by hand.
    final class ManualClock: Sendable {
        private let seconds = Locked(100.0)
        func advance(_ by: Double) { seconds.withLock { $0 += by } }
        var now: Double { seconds.withLock { $0 } }
    }

    /// The group of `address`, IPv6 counted per /64 as the server's default.
    static func client(_ address: String) -> ClientGroup {
        ClientGroup(IPAddress(address)!, ipv6PrefixLength: 64)
    }

    @Test func aBurstThenTheSustainedRate() {
        let clock = ManualClock()
        let limiter = PostRateLimiter(postsPerSecond: 2, burst: 3, now: { clock.now })
        #expect((0..<3).map { _ in limiter.admit(Self.client("10.0.0.1")) } == [nil, nil, nil], "the burst")
        let wait = limiter.admit(Self.client("10.0.0.1"))
        #expect(wait == 0.5, "one token refills in half a second")
        clock.advance(0.49)
        #expect(limiter.admit(Self.client("10.0.0.1")) != nil)
        clock.advance(0.02)
        #expect(limiter.admit(Self.client("10.0.0.1")) == nil)
        #expect(limiter.admit(Self.client("10.0.0.1")) != nil)
    }

    @Test func addressesAreCountedApart() {
        let clock = ManualClock()
        let limiter = PostRateLimiter(postsPerSecond: 1, burst: 1, now: { clock.now })
        #expect(limiter.admit(Self.client("10.0.0.1")) == nil)
        #expect(limiter.admit(Self.client("10.0.0.1")) != nil)
        #expect(limiter.admit(Self.client("10.0.0.2")) == nil, "another client is not held back")
    }

    @Test func aQuietAddressRefillsToTheBurstOnly() {
        let clock = ManualClock()
        let limiter = PostRateLimiter(postsPerSecond: 10, burst: 2, now: { clock.now })
        _ = limiter.admit(Self.client("192.0.2.1"))
        clock.advance(3600)
        #expect((0..<3).map { _ in limiter.admit(Self.client("192.0.2.1")) != nil } == [false, false, true])
    }

    @Test func manyAddressesDoNotGrowTheTableWithoutEnd() {
        let clock = ManualClock()
        let limiter = PostRateLimiter(postsPerSecond: 1, burst: 1, maxClients: 100, now: { clock.now })
        for index in 0..<10_000 { _ = limiter.admit(Self.client("10.0.\(index / 256).\(index % 256)")) }
        clock.advance(10)
        // Past the bound, full buckets are forgotten: a forgotten address starts with a full burst again.
        #expect(limiter.admit(Self.client("10.0.0.0")) == nil)
    }

    @Test func anIPv6PrefixIsOneClientAndIPv4AddressesAreEachTheirOwn() {
        let clock = ManualClock()
        let limiter = PostRateLimiter(postsPerSecond: 1, burst: 2, now: { clock.now })
        // One /64: six addresses share one burst of two, as a phone or an attacker choosing its addresses would.
        let sameNetwork = (1...6).map { limiter.admit(Self.client("2001:db8::\($0)")) == nil }
        #expect(sameNetwork == [true, true, false, false, false, false])
        #expect(limiter.admit(Self.client("2001:db8:0:1::1")) == nil, "the next /64 is another client")
        #expect(limiter.admit(Self.client("2001:db8:0:0:ffff::1")) != nil, "anywhere in the /64 is the same client")
        clock.advance(1)
        #expect(limiter.admit(Self.client("2001:db8::99")) == nil, "the shared bucket refills")
        // IPv4 is per address, and a mapped IPv6 address is its IPv4 one.
        #expect((1...3).map { limiter.admit(Self.client("198.51.100.\($0)")) == nil } == [true, true, true])
        #expect(limiter.admit(Self.client("::ffff:198.51.100.1")) == nil)
        #expect(limiter.admit(Self.client("198.51.100.1")) != nil, "the mapped address drew on the IPv4 one's bucket")
        // A /128 counts each address apart.
        let perAddress = (1...3).map { ClientGroup(IPAddress("2001:db8:9::\($0)")!, ipv6PrefixLength: 128) }
        #expect(perAddress.map { limiter.admit($0) == nil } == [true, true, true])
    }

    @Test func theRouterRefusesAPostPastTheRateWith429AndStoresNothing() throws {
        let clock = ManualClock()
        let repository = InMemoryChattRepository()
        let router = ChattRouter(
            feed: ChattFeed(repository: repository),
            postLimit: PostRateLimiter(postsPerSecond: 1, burst: 1, now: { clock.now }))
        var post = HTTPRequest(method: .POST, target: "/postmaps", path: "/postmaps",
                               body: Array(#"{"name":"a","message":"b"}"#.utf8))
        post.clientGroup = Self.client("192.0.2.7")
        #expect(router.respond(to: post).status == .ok)
        let refused = try #require(router.respondImmediately(to: post), "refused on the I/O queue")
        #expect(refused.status == .tooManyRequests)
        #expect(refused.headers["Retry-After"] == "1")
        #expect(String(decoding: refused.body, as: UTF8.self) == #"{"error":"too many posts from this address"}"#)
        #expect(refused.route == "/postmaps")
        #expect(repository.chatts.count == 1, "nothing stored for the refused post")
        var other = post
        other.clientGroup = Self.client("192.0.2.8")
        #expect(router.respond(to: other).status == .ok)
        clock.advance(1)
        #expect(router.respond(to: post).status == .ok)
        #expect(repository.chatts.count == 3)
        // Reads are never limited.
        var read = HTTPRequest(method: .GET, target: "/getmaps", path: "/getmaps")
        read.clientGroup = Self.client("192.0.2.7")
        for _ in 0..<5 { #expect(router.respond(to: read).status == .ok) }
    }
}
