import ChattAPI
import ChattFeed
import ChattModel
import HTTPCore
import Locking
import TestSupport
import Testing

/// `--stale-if-error`: the last feed known current is served, with `Age`, for a bounded time while the database
/// cannot be reached; then 503 again. Time is an injected clock.
@Suite struct StaleIfErrorTests {
    let repository = InMemoryChattRepository()
    let clock = Locked(1000.0)

    func router(staleIfError: Double, cache: ChattFeedCache = ChattFeedCache()) -> ChattRouter {
        ChattRouter(repository: repository, feedCache: cache, staleIfError: staleIfError, now: { [clock] in
            clock.withLock { $0 }
        })
    }

    func get(_ router: ChattRouter, _ path: String = "/getmaps") -> HTTPResponse {
        router.respond(to: HTTPRequest(method: .GET, target: path, path: path, body: []))
    }

    func advance(_ seconds: Double) {
        clock.withLock { $0 += seconds }
    }

    @Test func theLastFeedKnownCurrentIsServedWithItsAgeUntilTheBound() async throws {
        try await repository.add(NewChatt(name: "a", message: "before the outage"))
        let router = router(staleIfError: 30)
        let current = get(router)
        #expect(current.status.code == 200 && current.headers["Age"] == nil)
        repository.fail(with: .unavailable("connection refused"))
        advance(12.7)
        let stale = get(router)
        #expect(stale.status.code == 200)
        #expect(stale.body == current.body)
        #expect(stale.headers["ETag"] == current.headers["ETag"])
        #expect(stale.headers["Age"] == "12")
        #expect(stale.cause?.contains("connection refused") == true)
        #expect(get(router, "/getchatts").status.code == 503, "a feed never served has nothing to fall back on")
        advance(17.3)
        #expect(get(router).headers["Age"] == "30")
        advance(0.1)
        let refused = get(router)
        #expect(refused.status.code == 503)
        #expect(refused.headers["Retry-After"] == "1")
    }

    @Test func aFeedServedFromATrustedCacheCountsAsKnownCurrentThen() async throws {
        try await repository.add(NewChatt(name: "a", message: "m"))
        let cache = ChattFeedCache()
        cache.setNotificationsTrusted(true)
        let router = router(staleIfError: 10, cache: cache)
        _ = get(router)  // read from the store, then cached
        advance(60)
        #expect(get(router).status.code == 200, "served from the trusted cache, which confirms it now")
        cache.setNotificationsTrusted(false)  // the listener's connection went quiet
        repository.fail(with: .unavailable("timeout"))
        advance(4)
        #expect(get(router).headers["Age"] == "4")
    }

    @Test func offByDefaultAndForRefusalsThatAreNotTheServers() async throws {
        try await repository.add(NewChatt(name: "a", message: "m"))
        let off = router(staleIfError: 0)
        _ = get(off)
        repository.fail(with: .unavailable("down"))
        #expect(get(off).status.code == 503)
        repository.fail(with: nil)
        let on = router(staleIfError: 30)
        _ = get(on)
        repository.fail(with: .unavailable("down"))
        let badSince = on.respond(to: HTTPRequest(
            method: .GET, target: "/getmaps?since=x", path: "/getmaps", query: "since=x", body: []))
        #expect(badSince.status.code == 400, "a client's own mistake is not hidden behind a stale feed")
    }
}
