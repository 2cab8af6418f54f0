import ChattAPI
import ChattFeed
import ChattModel
import HTTPCore
import Locking
import TestSupport
import Testing

/// `--stale-if-error`: the last feed known current is served, with `Age`, for a bounded time while the database
/// cannot be reached; then 503 again. Time is an injected clock; each stale answer is reported with its typed mark.
@Suite struct StaleIfErrorTests {
    let repository = InMemoryChattRepository()
    let clock = Locked(ContinuousClock.now)
    /// The marks of the stale feeds served, in order, with the id of the request each answered.
    let served = Locked<[(requestID: String?, stale: StaleFeed)]>([])

    func feed(staleIfError: Duration, strict: Bool = false) -> ChattFeed {
        ChattFeed(repository: repository, strict: strict, staleIfError: staleIfError, now: { [clock] in
            clock.withLock { $0 }
        })
    }

    func router(_ feed: ChattFeed) -> ChattRouter {
        ChattRouter(feed: feed, staleFeedServed: { [served] request, stale in
            served.withLock { $0.append((request.requestID, stale)) }
        })
    }

    func get(_ router: ChattRouter, _ path: String = "/getmaps") -> HTTPResponse {
        var request = HTTPRequest(method: .GET, target: path, path: path, body: [])
        request.requestID = "r\(served.withLock { $0.count })"
        return router.respond(to: request)
    }

    func advance(_ duration: Duration) {
        clock.withLock { $0 += duration }
    }

    @Test func theLastFeedKnownCurrentIsServedWithItsAgeUntilTheBound() async throws {
        try await repository.add(NewChatt(name: "a", message: "before the outage"))
        let router = router(feed(staleIfError: .seconds(30)))
        let current = get(router)
        #expect(current.status.code == 200 && current.headers["Age"] == nil)
        #expect(served.withLock { $0.isEmpty })
        repository.fail(with: .unavailable("connection refused"))
        advance(.milliseconds(12_700))
        let stale = get(router)
        #expect(stale.status.code == 200)
        #expect(stale.body == current.body)
        #expect(stale.headers["ETag"] == current.headers["ETag"])
        #expect(stale.headers["Age"] == "12")
        let mark = try #require(served.withLock { $0.last })
        #expect(mark.requestID == "r0")
        #expect(mark.stale == StaleFeed(age: 12, failure: .unavailable("connection refused")))
        #expect(get(router, "/getchatts").status.code == 503, "a feed never served has nothing to fall back on")
        advance(.milliseconds(17_300))
        #expect(get(router).headers["Age"] == "30")
        advance(.milliseconds(100))
        let refused = get(router)
        #expect(refused.status.code == 503)
        #expect(refused.headers["Retry-After"] == "1")
        #expect(served.withLock { $0.count } == 2, "only the stale answers are marked")
    }

    @Test func aFeedServedFromATrustedFeedCountsAsKnownCurrentThen() async throws {
        try await repository.add(NewChatt(name: "a", message: "m"))
        let feed = feed(staleIfError: .seconds(10))
        feed.listening(true)
        let router = router(feed)
        _ = get(router)  // read from the store, then current
        advance(.seconds(60))
        #expect(get(router).status.code == 200, "served from the trusted feed, which confirms it now")
        feed.listening(false)  // the listener's connection went quiet
        repository.fail(with: .unavailable("timeout"))
        advance(.seconds(4))
        #expect(get(router).headers["Age"] == "4")
    }

    @Test func offByDefaultWhenStrictAndForRefusalsThatAreNotTheServers() async throws {
        try await repository.add(NewChatt(name: "a", message: "m"))
        for off in [feed(staleIfError: .zero), feed(staleIfError: .seconds(30), strict: true)] {
            let router = router(off)
            _ = get(router)
            repository.fail(with: .unavailable("down"))
            #expect(get(router).status.code == 503)
            repository.fail(with: nil)
        }
        let on = router(feed(staleIfError: .seconds(30)))
        _ = get(on)
        repository.fail(with: .unavailable("down"))
        let badSince = on.respond(to: HTTPRequest(
            method: .GET, target: "/getmaps?since=x", path: "/getmaps", query: "since=x", body: []))
        #expect(badSince.status.code == 400, "a client's own mistake is not hidden behind a stale feed")
        #expect(served.withLock { $0.isEmpty })
    }
}
