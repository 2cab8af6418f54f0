import ChattAPI
import ChattFeed
import ChattModel
import TestSupport
import HTTPCore
import Testing

/// A client that posts and then reads must see its own chatt, even while the cache trusts notifications.
@Suite struct ReadYourWritesTests {
    let repository = InMemoryChattRepository()
    let cache = ChattFeedCache()

    @Test func aPostInvalidatesBeforeItsAnswer() throws {
        let router = ChattRouter(repository: repository, feedCache: cache)
        cache.setNotificationsTrusted(true)
        _ = router.respond(to: HTTPRequest(method: .GET, target: "/getmaps", path: "/getmaps"))
        let before = cache.generation
        let body = Array(#"{"name":"a","message":"mine"}"#.utf8)
        #expect(router.respond(to: HTTPRequest(method: .POST, target: "/postchatt", path: "/postchatt", body: body))
            .status == .ok)
        #expect(cache.generation > before)
        let after = router.respond(to: HTTPRequest(method: .GET, target: "/getmaps", path: "/getmaps"))
        #expect(String(decoding: after.body, as: UTF8.self).contains("mine"))
    }
}
