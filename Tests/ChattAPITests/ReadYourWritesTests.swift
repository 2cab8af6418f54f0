import ChattAPI
@testable import ChattFeed
import ChattModel
import TestSupport
import HTTPCore
import Testing

/// A client that posts and then reads must see its own chatt, even while the feed trusts notifications.
@Suite struct ReadYourWritesTests {
    let repository = InMemoryChattRepository()

    @Test func aReadRightAfterAPostShowsIt() throws {
        let feed = ChattFeed(repository: repository)
        let router = ChattRouter(feed: feed)
        feed.listening(true)
        _ = router.respond(to: HTTPRequest(method: .GET, target: "/getmaps", path: "/getmaps"))
        let body = Array(#"{"name":"a","message":"mine"}"#.utf8)
        for round in 0..<20 {
            #expect(router.respond(to: HTTPRequest(method: .POST, target: "/postchatt", path: "/postchatt", body: body))
                .status == .ok)
            // Read at once, as the poster would: never before the log has taken the post in.
            let after = router.respond(to: HTTPRequest(method: .GET, target: "/getmaps", path: "/getmaps"))
            #expect(String(decoding: after.body, as: UTF8.self).components(separatedBy: "mine").count == round + 2)
        }
        #expect(repository.fullReads == 1, "appended, not read again")
    }
}
