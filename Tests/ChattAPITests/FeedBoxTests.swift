@testable import ChattAPI
@testable import ChattFeed
import ChattModel
import HTTPCore
import TestSupport
import Testing

/// `?bbox=` (and `newest`) on `GET /getmaps`: the rows located in a box, in feed order, tagged and compressed.
@Suite struct FeedBoxTests {
    let repository = InMemoryChattRepository()
    let router: ChattRouter

    /// Ann Arbor, Detroit, Fiji on both sides of the antimeridian, no location, and Ann Arbor again.
    static let places: [String?] = [
        "[42.2808,-83.743,\"N\",\"w\"]", "[42.3314,-83.0458,\"E\",\"run\"]", "[-17.7134,178.065,\"S\",\"s\"]",
        "[-16.5,-179.9,\"W\",\"s\"]", nil, "[42.2808,-83.743,\"N\",\"w\"]",
    ]

    init() async throws {
        router = ChattRouter(feed: ChattFeed(repository: repository))
        for (serial, geodata) in Self.places.enumerated() {
            try await repository.add(NewChatt(name: "user\(serial)", message: "m \(serial)", geodata: geodata))
        }
    }

    private func rows(_ query: String, path: String = "/getmaps") -> [Int]? {
        let response = router.respond(to: feedRequest(path: path, query: query))
        guard response.status == .ok else { return nil }
        let chatts = repository.chatts
        let encode = path == "/getmaps" ? ChattRowEncoder.mapsRows : ChattRowEncoder.chattsRows
        // Which rows the body holds: every subset of six is tried, byte for byte.
        return (0..<(1 << chatts.count)).lazy.map { mask in (0..<chatts.count).filter { mask & (1 << $0) != 0 } }
            .first { encode($0.map { chatts[$0] }).elementsEqual(response.body) }
    }

    @Test func givesTheRowsInTheBoxInFeedOrder() {
        #expect(rows("bbox=-84,42,-83.5,42.5") == [0, 5])
        #expect(rows("bbox=-84,42,-83,42.5") == [0, 1, 5])
        #expect(rows("bbox=-83.743,42.2808,-83.743,42.2808") == [0, 5], "edges are inside")
        #expect(rows("bbox=178,-18,-179,-16") == [2, 3], "across the antimeridian")
        #expect(rows("bbox=-180,-90,180,90") == [0, 1, 2, 3, 5], "every located chatt")
        #expect(rows("bbox=0,0,1,1") == [])
        #expect(rows("bbox=-84%2C42%2c-83.5%2C42.5") == [0, 5], "commas escaped as URLSearchParams does")
        #expect(rows("bbox=-84%2C%2B42%2C-83.5%2C4.25e%2B1") == [0, 5], "plus signs escaped, as urlencode does")
    }

    @Test func combinesWithSinceLimitAndNewest() {
        let ids = repository.chatts.map(\.id)
        #expect(rows("bbox=-180,-90,180,90&limit=2") == [0, 1])
        #expect(rows("bbox=-180,-90,180,90&newest=2") == [3, 5])
        #expect(rows("since=\(ids[1])&bbox=-180,-90,180,90&limit=2") == [2, 3])
        #expect(rows("bbox=-180,-90,180,90&since=\(ids[1])&newest=1") == [5])
        #expect(rows("newest=2") == [4, 5], "newest slices the whole feed too")
        #expect(rows("newest=0") == [])
    }

    @Test func theChattsFeedIgnoresABox() {
        #expect(rows("bbox=0,0,1,1", path: "/getchatts") == [0, 1, 2, 3, 4, 5])
        #expect(rows("bbox=nonsense", path: "/getchatts") == [0, 1, 2, 3, 4, 5])
    }

    @Test(arguments: [
        "bbox=1,2,3", "bbox=1,2,3,4,5", "bbox=", "bbox", "bbox=a,b,c,d", "bbox=NaN,0,1,1", "bbox=0,10,1,5",
        "bbox=-181,0,1,1", "bbox=0,0,1,91", "bbox=0,0,1,1&bbox=0,0,1,1", "bbox=0%2C0%2C1%2C1%2C", "bbox=%3G,0,1,1",
        "bbox=0%2,0,1,1", "bbox=0,0,1,1%",
        "limit=1&newest=1",
        "newest=-1", "newest=1&newest=2", "newest=x",
    ])
    func malformedIs400(_ query: String) {
        let response = router.respond(to: feedRequest(query: query))
        #expect(response.status.code == 400)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(String(decoding: response.body, as: UTF8.self).hasPrefix(#"{"error":""#))
    }

    @Test func isTaggedGzippedAndAnswered304() throws {
        let plain = router.respond(to: feedRequest(query: "bbox=-84,42,-83,43"))
        let etag = try #require(plain.headers["ETag"])
        #expect(plain.headers["Feed-Position"] != nil)
        let zipped = router.respond(to: feedRequest(query: "bbox=-84,42,-83,43", ("Accept-Encoding", "gzip")))
        #expect(zipped.headers["Content-Encoding"] == "gzip")
        #expect(zipped.headers["Vary"] == "Accept-Encoding")
        #expect(gunzip(zipped.body.bytes) == plain.body.bytes)
        #expect(try #require(zipped.headers["ETag"]) != etag)
        let again = router.respond(to: feedRequest(query: "bbox=-84,42,-83,43", ("If-None-Match", etag)))
        #expect(again.status == .notModified)
        let other = router.respond(to: feedRequest(query: "bbox=-84,42,-83.5,43", ("If-None-Match", etag)))
        #expect(other.status == .ok, "another box has other rows, so another tag")
    }

    @Test func aRemovedChattLeavesTheBox() async throws {
        router.feed.listening(true)
        #expect(rows("bbox=-84,42,-83,43") == [0, 1, 5])
        #expect(repository.remove(id: repository.chatts[1].id))
        try await router.feed.log.noticedAndRead()
        let response = router.respond(to: feedRequest(query: "bbox=-84,42,-83,43"))
        let body = String(decoding: response.body, as: UTF8.self)
        #expect(body.contains("user0") && body.contains("user5") && !body.contains("user1"))
    }
}
