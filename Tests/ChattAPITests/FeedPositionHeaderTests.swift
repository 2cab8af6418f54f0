import ChattAPI
import ChattFeed
import ChattModel
import HTTPCore
import TestSupport
import Testing

/// `Feed-Position: E-N` on every feed answer: the commit position of the whole feed it was cut from.
@Suite struct FeedPositionHeaderTests {
    let repository = InMemoryChattRepository()
    let feed: ChattFeed
    let router: ChattRouter

    init() async throws {
        feed = ChattFeed(repository: repository)
        feed.listening(true)
        router = ChattRouter(feed: feed)
        for serial in 1...5 { try await repository.add(NewChatt(name: "n", message: "m\(serial)", geodata: nil)) }
    }

    private func position(_ request: HTTPRequest) -> String? {
        router.respond(to: request).headers["Feed-Position"]
    }

    @Test(arguments: ["/getmaps", "/getchatts"])
    func everyAnswerOfAFeedCarriesItsPosition(path: String) throws {
        let full = router.respond(to: feedRequest(path: path))
        #expect(full.status == .ok && full.headers["Feed-Position"] == "1-5")
        let etag = try #require(full.headers["ETag"])
        let notModified = router.respond(to: feedRequest(path: path, ("If-None-Match", etag)))
        #expect(notModified.status == .notModified && notModified.headers["Feed-Position"] == "1-5")
        #expect(position(feedRequest(path: path, ("Accept-Encoding", "gzip"))) == "1-5")
        #expect(position(feedRequest(path: path, method: .HEAD)) == "1-5")
        // A slice names the whole feed's position: where a stream resumes whoever holds the feed up to it.
        #expect(position(feedRequest(path: path, query: "limit=2")) == "1-5")
        let first = try #require(repository.chatts.first?.id)
        let since = router.respond(to: feedRequest(path: path, query: "since=\(first)"))
        #expect(since.status == .ok && since.headers["Feed-Position"] == "1-5")
        let sliceTag = try #require(since.headers["ETag"])
        let sliceNotModified = router.respond(
            to: feedRequest(path: path, query: "since=\(first)", ("If-None-Match", sliceTag)))
        #expect(sliceNotModified.status == .notModified && sliceNotModified.headers["Feed-Position"] == "1-5")
    }

    @Test func thePositionAdvancesWithEveryPostAndEveryOtherWritersInsert() async throws {
        #expect(position(feedRequest()) == "1-5")
        let body = Array(#"{"name":"a","message":"mine"}"#.utf8)
        let post = router.respond(to: HTTPRequest(method: .POST, target: "/postchatt", path: "/postchatt", body: body))
        #expect(post.status == .ok && post.headers["Feed-Position"] == nil)
        #expect(position(feedRequest()) == "1-6")
        repository.storeCommitted(NewChatt(name: "psql", message: "other"), timestamp: "2026-03-25T08:11:59.100007Z")
        feed.chattsAdded()
        #expect(position(feedRequest(path: "/getchatts")) == "1-7")
        #expect(position(feedRequest()) == "1-7")
    }

    @Test func anEditAnswersWithTheNewEpoch() {
        #expect(position(feedRequest()) == "1-5")
        repository.edit()
        feed.invalidate()
        #expect(position(feedRequest()) == "2-5")
    }

    @Test func errorsCarryNoPosition() {
        #expect(router.respond(to: feedRequest(query: "limit=x")).headers["Feed-Position"] == nil)
        let unknown = "00000000-0000-4000-8000-999999999999"
        let missing = router.respond(to: feedRequest(query: "since=\(unknown)"))
        #expect(missing.status == .notFound && missing.headers["Feed-Position"] == nil)
    }
}
