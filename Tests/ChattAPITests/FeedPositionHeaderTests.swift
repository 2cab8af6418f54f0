import ChattAPI
@testable import ChattFeed
import ChattModel
import HTTPCore
import TestSupport
import Testing

/// `Feed-Position` on every feed answer: the position of the change log the whole feed it was cut from shows.
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

    /// The position of the store's newest tick, whole.
    private var newest: String {
        repository.newestTick.position().description
    }

    @Test(arguments: ["/getmaps", "/getchatts"])
    func everyAnswerOfAFeedCarriesItsPosition(path: String) throws {
        let full = router.respond(to: feedRequest(path: path))
        let current = newest
        #expect(full.status == .ok && full.headers["Feed-Position"] == current)
        let etag = try #require(full.headers["ETag"])
        let notModified = router.respond(to: feedRequest(path: path, ("If-None-Match", etag)))
        #expect(notModified.status == .notModified && notModified.headers["Feed-Position"] == current)
        #expect(position(feedRequest(path: path, ("Accept-Encoding", "gzip"))) == current)
        #expect(position(feedRequest(path: path, method: .HEAD)) == current)
        // A slice names the whole feed's position: where a stream resumes whoever holds the feed up to it.
        #expect(position(feedRequest(path: path, query: "limit=2")) == current)
        let first = try #require(repository.chatts.first?.id)
        let since = router.respond(to: feedRequest(path: path, query: "since=\(first)"))
        #expect(since.status == .ok && since.headers["Feed-Position"] == current)
        let sliceTag = try #require(since.headers["ETag"])
        let sliceNotModified = router.respond(
            to: feedRequest(path: path, query: "since=\(first)", ("If-None-Match", sliceTag)))
        #expect(sliceNotModified.status == .notModified && sliceNotModified.headers["Feed-Position"] == current)
    }

    @Test func thePositionAdvancesWithEveryPostAndEveryOtherWritersInsert() async throws {
        let start = try #require(position(feedRequest()).flatMap { LogPosition(text: $0) })
        let body = Array(#"{"name":"a","message":"mine"}"#.utf8)
        let post = router.respond(to: HTTPRequest(method: .POST, target: "/postchatt", path: "/postchatt", body: body))
        #expect(post.status == .ok && post.headers["Feed-Position"] == nil)
        let afterPost = try #require(position(feedRequest()).flatMap { LogPosition(text: $0) })
        #expect(start.precedes(afterPost) && afterPost.description == newest)
        repository.storeCommitted(NewChatt(name: "psql", message: "other"), timestamp: "2026-03-25T08:11:59.100007Z")
        try await feed.log.noticedAndRead()
        #expect(position(feedRequest(path: "/getchatts")) == newest)
        #expect(position(feedRequest()) == newest && newest != afterPost.description)
    }

    @Test func anEditAnswersWithThePositionAfterIt() async throws {
        let before = position(feedRequest())
        repository.edit()
        try await feed.log.noticedAndRead()
        #expect(position(feedRequest()) == newest && newest != before)
    }

    @Test func errorsCarryNoPosition() {
        #expect(router.respond(to: feedRequest(query: "limit=x")).headers["Feed-Position"] == nil)
        let unknown = "00000000-0000-4000-8000-999999999999"
        let missing = router.respond(to: feedRequest(query: "since=\(unknown)"))
        #expect(missing.status == .notFound && missing.headers["Feed-Position"] == nil)
    }
}
