import ChattAPI
@testable import ChattFeed
import ChattModel
import TestSupport
import HTTPCore
import Testing

/// A client that posts and then reads must see its own chatt, even while the feed trusts notifications.
@Suite struct ReadYourWritesTests {
    let repository = InMemoryChattRepository()

    @Test func aPostIsTakenInBeforeItsAnswer() throws {
        let feed = ChattFeed(repository: repository)
        let router = ChattRouter(feed: feed)
        feed.listening(true)
        _ = router.respond(to: HTTPRequest(method: .GET, target: "/getmaps", path: "/getmaps"))
        let before = feed.generation
        let body = Array(#"{"name":"a","message":"mine"}"#.utf8)
        #expect(router.respond(to: HTTPRequest(method: .POST, target: "/postchatt", path: "/postchatt", body: body))
            .status == .ok)
        #expect(feed.generation > before)
        let after = router.respond(to: HTTPRequest(method: .GET, target: "/getmaps", path: "/getmaps"))
        #expect(String(decoding: after.body, as: UTF8.self).contains("mine"))
        #expect(repository.snapshotReads == 1, "appended, not read again")
    }
}
