import ChattAPI
import ChattFeed
import ChattModel
import TestSupport
import HTTPCore
import JSON
import Testing

private func request(_ method: HTTPMethod, _ path: String, query: String? = nil, body: String = "") -> HTTPRequest {
    HTTPRequest(
        method: method, target: path + (query.map { "?" + $0 } ?? ""), path: path, query: query, body: Array(body.utf8))
}

private func text(_ response: HTTPResponse) -> String {
    String(decoding: response.body, as: UTF8.self)
}

private let iOSBody = #"{"name":"alice","message":"hi","geodata":"[42.2936,-83.7166,\"North\",\"walking\"]"}"#

/// A route, written without a trailing slash, and the method it serves.
struct RouteCase: Sendable, CustomTestStringConvertible {
    let method: HTTPMethod
    let path: String
    let status: Int
    let allow: String
    var testDescription: String { "\(method) \(path)" }
    /// Both spellings docs/API.md accepts; the root has only one.
    var spellings: [String] { path == "/" ? ["/"] : [path, path + "/"] }
}

@Suite struct ChattRouterTests {
    static let routes = [
        RouteCase(method: .GET, path: "/", status: 200, allow: "GET, HEAD"),
        RouteCase(method: .POST, path: "/postmaps", status: 200, allow: "POST"),
        RouteCase(method: .GET, path: "/getmaps", status: 200, allow: "GET, HEAD"),
        RouteCase(method: .POST, path: "/postchatt", status: 200, allow: "POST"),
        RouteCase(method: .GET, path: "/getchatts", status: 200, allow: "GET, HEAD"),
        RouteCase(method: .GET, path: "/healthz", status: 200, allow: "GET, HEAD"),
        RouteCase(method: .GET, path: "/readyz", status: 200, allow: "GET, HEAD"),
        RouteCase(method: .GET, path: "/metrics", status: 200, allow: "GET, HEAD"),
    ]

    let repository: InMemoryChattRepository
    let router: ChattRouter

    init() {
        repository = InMemoryChattRepository()
        router = ChattRouter(feed: ChattFeed(repository: repository), metrics: { "chatterd_requests_total 3\n" })
    }

    @Test("serves each route with and without a trailing slash", arguments: routes)
    func servesRoute(_ route: RouteCase) {
        for path in route.spellings {
            let response = router.respond(to: request(route.method, path, body: iOSBody))
            #expect(response.status.code == route.status, "\(path)")
            #expect(response.headers["Content-Type"] != nil, "\(path)")
        }
    }

    @Test("answers a wrong method with 405 and Allow", arguments: routes)
    func wrongMethod(_ route: RouteCase) {
        // Registered methods beyond RFC 9110's (QUERY, WebDAV's) too: RFC 9110 §15.5.6 keeps 501 for unknown ones.
        let wrong: [HTTPMethod] = route.method == .POST
            ? [.GET, .HEAD, .PUT, .QUERY, .PROPFIND] : [.POST, .DELETE, .OPTIONS, .QUERY, .VERSION_CONTROL]
        for method in wrong {
            let response = router.respond(to: request(method, route.spellings.last ?? route.path))
            #expect(response.status.code == 405, "\(method)")
            #expect(response.headers.values("Allow") == [route.allow], "\(method)")
            #expect(text(response) == #"{"error":"method not allowed"}"#)
        }
    }

    @Test("HEAD answers exactly as GET", arguments: routes.filter { $0.method == .GET })
    func headIsGet(_ route: RouteCase) async throws {
        try await repository.add(NewChatt(name: "a", message: "b"))
        #expect(router.respond(to: request(.HEAD, route.path)) == router.respond(to: request(.GET, route.path)))
    }

    @Test(arguments: [
        "/nope", "//", "/getmaps//", "/GETMAPS", "/getmaps/x", "/getmaps.json", "", "getmaps", "/healthz?",
    ])
    func unknownPathIs404ForAnyMethod(path: String) {
        for method in [HTTPMethod.GET, .POST, .DELETE] {
            let response = router.respond(to: request(method, path))
            #expect(response.status.code == 404, "\(method) \(path)")
            #expect(text(response) == #"{"error":"not found"}"#)
        }
    }

    @Test func metricsWithoutAClosureIs404() {
        let router = ChattRouter(feed: ChattFeed(repository: repository))
        let response = router.respond(to: request(.GET, "/metrics"))
        #expect(response.status.code == 404)
    }

    @Test func metricsServesTheClosureTextAsPrometheus() {
        let response = router.respond(to: request(.GET, "/metrics"))
        #expect(text(response) == "chatterd_requests_total 3\n")
        #expect(response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8")
    }

    @Test func rootNamesTheServerAsAJSONString() {
        #expect(text(router.respond(to: request(.GET, "/"))) == #""chatterd""#)
        let named = ChattRouter(feed: ChattFeed(repository: repository), serverName: #"my "srv""#)
        #expect(text(named.respond(to: request(.GET, "/"))) == #""my \"srv\"""#)
    }

    @Test func healthAndReadinessBodies() {
        let health = router.respond(to: request(.GET, "/healthz"))
        #expect(text(health) == #"{"status":"ok"}"#)
        #expect(health.headers["Content-Type"] == "application/json")
        #expect(text(router.respond(to: request(.GET, "/readyz"))) == #"{"status":"ready"}"#)
    }

    @Test(arguments: [RepositoryError.unavailable("down"), .rejected("no"), .failed("boom")])
    func readinessFailsWith503AndRetryAfter(error: RepositoryError) {
        repository.fail(with: error)
        let response = router.respond(to: request(.GET, "/readyz/"))
        #expect(response.status.code == 503)
        #expect(response.headers["Retry-After"] == "1")
        #expect(text(response) == #"{"status":"unavailable"}"#)
        #expect(response.cause == error.detail, "the log names what the repository said")
        #expect(response.route == "/readyz")
    }

    @Test func postsAreListedOldestFirstWithExactBytes() {
        #expect(router.respond(to: request(.POST, "/postmaps", body: iOSBody)) == .json(.ok, Array("{}".utf8)))
        let second = #"{"username":"bob","message":"é \"q\"\n😀","geodata":"ignored"}"#
        #expect(text(router.respond(to: request(.POST, "/postchatt/", body: second))) == "{}")
        let maps =
            #"[["alice","hi","00000000-0000-4000-8000-000000000001","2026-03-25T08:11:59.100001Z","#
            + #""[42.2936,-83.7166,\"North\",\"walking\"]"],"#
            + #"["bob","é \"q\"\n😀","00000000-0000-4000-8000-000000000002","2026-03-25T08:11:59.100002Z",null]]"#
        let mapsResponse = router.respond(to: request(.GET, "/getmaps"))
        #expect(mapsResponse.status == .ok && mapsResponse.headers["Content-Type"] == "application/json")
        #expect(text(mapsResponse) == maps)
        let chatts =
            #"[["alice","hi","00000000-0000-4000-8000-000000000001","2026-03-25T08:11:59.100001Z"],"#
            + #"["bob","é \"q\"\n😀","00000000-0000-4000-8000-000000000002","2026-03-25T08:11:59.100002Z"]]"#
        #expect(text(router.respond(to: request(.GET, "/getchatts/"))) == chatts)
    }

    @Test func unchangedStoreIsServedFromOneSharedBody() {
        _ = router.respond(to: request(.POST, "/postmaps", body: iOSBody))
        let first = router.respond(to: request(.GET, "/getmaps"))
        let second = router.respond(to: request(.GET, "/getmaps/"))
        #expect(first == second)
        #expect(repository.fullReads == 1)
        _ = router.respond(to: request(.GET, "/getchatts"))
        #expect(repository.fullReads == 2)
    }

    @Test func aNewPostInvalidatesTheCachedFeeds() {
        #expect(text(router.respond(to: request(.GET, "/getmaps"))) == "[]")
        #expect(text(router.respond(to: request(.GET, "/getchatts"))) == "[]")
        _ = router.respond(to: request(.POST, "/postchatt", body: iOSBody))
        #expect(text(router.respond(to: request(.GET, "/getmaps"))).contains("alice"))
        #expect(text(router.respond(to: request(.GET, "/getchatts"))).contains("alice"))
    }

    @Test func routesThatNeverReachTheRepositoryAreAnsweredImmediately() {
        for (method, path) in [(HTTPMethod.GET, "/"), (.GET, "/healthz"), (.GET, "/metrics"), (.GET, "/postmaps"),
                               (.POST, "/getmaps"), (.GET, "/nope"), (.HEAD, "/healthz/")] {
            let immediate = router.respondImmediately(to: request(method, path))
            #expect(immediate == router.respond(to: request(method, path)), "\(method) \(path)")
        }
    }

    @Test func readinessAndUncachedFeedsAreDeferredToATask() {
        for (method, path) in [(HTTPMethod.GET, "/getmaps/"), (.HEAD, "/getchatts"), (.GET, "/readyz")] {
            guard case .deferred = router.plan(for: request(method, path)) else {
                Issue.record("\(method) \(path) is not deferred")
                continue
            }
        }
    }

    @Test func validPostsAreDeferredToTheStoreAndInvalidOnesAnsweredAtOnce() {
        for path in ["/postmaps", "/postchatt/"] {
            guard case .deferred = router.plan(for: request(.POST, path, body: iOSBody)) else {
                Issue.record("a valid post to \(path) is not deferred")
                continue
            }
            let invalid = router.respondImmediately(to: request(.POST, path, body: "{"))
            #expect(invalid?.status.code == 422, "\(path)")
        }
        #expect(repository.chatts.isEmpty, "planning a post stores nothing until it starts")
    }

    @Test func emptyStoreListsAsEmptyArrays() {
        #expect(text(router.respond(to: request(.GET, "/getmaps"))) == "[]")
        #expect(text(router.respond(to: request(.GET, "/getchatts"))) == "[]")
    }

    @Test func queryStringIsIgnoredUnlessItNamesAFeedParameter() {
        #expect(router.respond(to: request(.POST, "/postchatt", query: "x=1", body: iOSBody)).status.code == 200)
        #expect(
            text(router.respond(to: request(.GET, "/getchatts", query: "sincere=0&limits=1"))).hasPrefix(#"[["alice""#))
        #expect(router.respond(to: request(.GET, "/healthz/", query: "")).status.code == 200)
    }

    @Test func invalidBodyIsRejectedAndStoresNothing() {
        let response = router.respond(to: request(.POST, "/postmaps", body: #"{"name":"","message":"m"}"#))
        #expect(response.status.code == 400)
        #expect(text(response) == #"{"error":"name must be 1 to 32 characters"}"#)
        #expect(router.respond(to: request(.POST, "/postmaps", body: "{")).status.code == 422)
        #expect(repository.chatts.isEmpty)
    }

    @Test(arguments: [("/postmaps", HTTPMethod.POST), ("/getmaps", .GET), ("/getchatts", .GET)])
    func unavailableStoreIs503WithRetryAfter(path: String, method: HTTPMethod) {
        repository.fail(with: .unavailable("connection refused at 10.0.0.5"))
        let response = router.respond(to: request(method, path, body: iOSBody))
        #expect(response.status.code == 503)
        #expect(response.headers["Retry-After"] == "1")
        #expect(!text(response).contains("10.0.0.5"))
    }

    @Test func rejectedValueIs400() {
        repository.fail(with: .rejected("22001 value too long for type character varying(32)"))
        let response = router.respond(to: request(.POST, "/postchatt", body: iOSBody))
        #expect(response.status.code == 400)
        #expect(!text(response).contains("varying"))
    }

    @Test(arguments: [("/postmaps", HTTPMethod.POST), ("/getmaps", .GET), ("/getchatts", .GET)])
    func storeFaultIs500WithoutDetail(path: String, method: HTTPMethod) {
        repository.fail(with: .failed("ERROR: relation \"chatts\" does not exist at /srv/db"))
        let response = router.respond(to: request(method, path, body: iOSBody))
        #expect(response == .error(.internalServerError, "internal error"))
        #expect(text(response) == #"{"error":"internal error"}"#)
    }
}
