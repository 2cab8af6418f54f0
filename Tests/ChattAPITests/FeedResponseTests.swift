import ChattAPI
import ChattFeed
import ChattModel
import TestSupport
import HTTPCore
import Testing

/// A feed GET (or HEAD) with the given query and header fields.
func feedRequest(
    path: String = "/getmaps", query: String? = nil, method: HTTPMethod = .GET, _ headers: (String, String)...
) -> HTTPRequest {
    HTTPRequest(
        method: method, target: path + (query.map { "?" + $0 } ?? ""), path: path, query: query,
        headers: HTTPHeaders(headers))
}

/// ETags and 304, gzip, and what the I/O queue may answer by itself.
@Suite struct FeedResponseTests {
    let repository = InMemoryChattRepository()
    let router: ChattRouter

    init() async throws {
        router = ChattRouter(feed: ChattFeed(repository: repository))
        for serial in 1...50 {
            try await repository.add(NewChatt(name: "user\(serial)", message: "hello from \(serial)", geodata: nil))
        }
    }

    @Test func feedsCarryAStrongContentETagAndVary() throws {
        let response = router.respond(to: feedRequest())
        let etag = try #require(response.headers["ETag"])
        #expect(etag.count == 18 && etag.hasPrefix("\"") && etag.hasSuffix("\""))
        #expect(etag.dropFirst().dropLast().allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(response.headers["Vary"] == "Accept-Encoding")
        #expect(response.headers["Content-Encoding"] == nil)
        #expect(router.respond(to: feedRequest(path: "/getchatts")).headers["ETag"] != etag)
    }

    @Test func twoServersOnOneStoreGiveTheSameTagAndAPostChangesIt() async throws {
        let other = ChattRouter(feed: ChattFeed(repository: repository))
        let etag = router.respond(to: feedRequest()).headers["ETag"]
        #expect(other.respond(to: feedRequest()).headers["ETag"] == etag)
        try await repository.add(NewChatt(name: "n", message: "m"))
        #expect(other.respond(to: feedRequest()).headers["ETag"] != etag)
    }

    @Test func aMatchingIfNoneMatchGets304WithTheSameHeaders() throws {
        let full = router.respond(to: feedRequest())
        let etag = try #require(full.headers["ETag"])
        for condition in [etag, "W/" + etag, "\"other\", " + etag, "*"] {
            for method in [HTTPMethod.GET, .HEAD] {
                let response = router.respond(to: feedRequest(method: method, ("If-None-Match", condition)))
                #expect(response.status == .notModified, "\(method) \(condition)")
                #expect(response.headers == full.headers)
                #expect(!response.sendsBody(inAnswerTo: method))
                // The kept body makes Content-Length the 200's, as RFC 9110 §8.6 allows.
                #expect(response.body.count == full.body.count)
            }
        }
    }

    @Test func aStaleOrMalformedIfNoneMatchGetsTheFullFeed() async throws {
        let full = router.respond(to: feedRequest())
        for condition in [#""0000000000000000""#, "nonsense", #"W/"x", "y""#] {
            #expect(router.respond(to: feedRequest(("If-None-Match", condition))) == full, "\(condition)")
        }
        let old = try #require(full.headers["ETag"])
        try await repository.add(NewChatt(name: "n", message: "new"))
        let fresh = router.respond(to: feedRequest(("If-None-Match", old)))
        #expect(fresh.status == .ok && fresh.headers["ETag"] != old)
    }

    @Test func gzipDecodesToTheIdenticalBodyAndHasItsOwnTag() throws {
        let plain = router.respond(to: feedRequest())
        let zipped = router.respond(to: feedRequest(("Accept-Encoding", "gzip, deflate, br")))
        #expect(zipped.status == .ok)
        #expect(zipped.headers["Content-Encoding"] == "gzip")
        #expect(zipped.headers["Vary"] == "Accept-Encoding")
        #expect(zipped.body.count < plain.body.count / 3)
        #expect(gunzip(zipped.body.bytes) == plain.body.bytes)
        let etag = try #require(zipped.headers["ETag"])
        #expect(etag != plain.headers["ETag"])
        #expect(router.respond(to: feedRequest(("Accept-Encoding", "gzip"), ("If-None-Match", etag))).status
            == .notModified)
        // The plain body's tag does not name the gzip representation.
        let plainTag = try #require(plain.headers["ETag"])
        #expect(router.respond(to: feedRequest(("Accept-Encoding", "gzip"), ("If-None-Match", plainTag))).status == .ok)
    }

    @Test(arguments: ["gzip;q=0", "identity", "", "br", "gzip;q=0.5, identity", "*;q=0.1, gzip;q=0"])
    func clientsThatDoNotPreferGzipGetThePlainBody(_ acceptEncoding: String) {
        let response = router.respond(to: feedRequest(("Accept-Encoding", acceptEncoding)))
        #expect(response.headers["Content-Encoding"] == nil)
        #expect(response.headers["Vary"] == "Accept-Encoding")
        #expect(response == router.respond(to: feedRequest()))
    }

    @Test(arguments: ["*", "x-gzip", "GZIP;q=0.5", "br;q=1, gzip;q=0.8", "identity;q=0.5, gzip"])
    func clientsThatPreferGzipGetIt(_ acceptEncoding: String) {
        #expect(router.respond(to: feedRequest(("Accept-Encoding", acceptEncoding))).headers["Content-Encoding"]
            == "gzip")
    }

    @Test func aCurrentTrustedFeedIsAnsweredOnTheIOQueueGzipOnceCompressed() throws {
        #expect(router.respondImmediately(to: feedRequest()) == nil, "untrusted: needs a version check")
        router.feed.listening(true)
        #expect(router.respondImmediately(to: feedRequest()) == nil, "no feed yet")
        let full = router.respond(to: feedRequest())
        #expect(router.respondImmediately(to: feedRequest()) == full)
        #expect(router.respondImmediately(to: feedRequest(method: .HEAD)) == full)
        let gzip = feedRequest(("Accept-Encoding", "gzip"))
        #expect(router.respondImmediately(to: gzip) == nil, "compressing is not for an I/O queue")
        let zipped = router.respond(to: gzip)
        #expect(router.respondImmediately(to: gzip) == zipped)
        #expect(repository.fullReads == 1)
    }

    @Test func eachReadCountsOnceAsAHitOrAMiss() {
        // Regression: a read that the I/O queue passed on (gzip not made yet) was counted as a hit twice.
        router.feed.listening(true)
        _ = router.respond(to: feedRequest())
        #expect(router.feed.counts == (hits: 0, misses: 1))
        _ = router.respondImmediately(to: feedRequest())
        #expect(router.feed.counts == (hits: 1, misses: 1))
        let gzip = feedRequest(("Accept-Encoding", "gzip"))
        #expect(router.respondImmediately(to: gzip) == nil)
        _ = router.respond(to: gzip)
        #expect(router.feed.counts == (hits: 2, misses: 1))
    }

    @Test func gzipIsMadeOnceAndSharedAcrossRequests() {
        let gzip = feedRequest(("Accept-Encoding", "gzip"))
        let first = router.respond(to: gzip).body
        let second = router.respond(to: gzip).body
        let addresses = { (body: HTTPBody) in body.segments.map { $0.withUnsafeBufferPointer { $0.baseAddress } } }
        #expect(!first.isEmpty && addresses(first) == addresses(second), "the same segments, not copies")
    }
}
