@testable import ChattAPI
@testable import ChattFeed
import ChattModel
import TestSupport
import HTTPCore
import Testing

private func id(_ serial: Int) -> String {
    "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - String(serial).count) + String(serial)
}

/// `?since=<id>` and `?limit=<n>` on the feeds, served from the cached body.
@Suite struct FeedSliceTests {
    let repository = InMemoryChattRepository()
    let router: ChattRouter
    /// Names and messages with every byte the index must step over: quotes, backslashes, commas, brackets.
    static let awkward = [#"a\"#, #"","x"#, "\\\"", "],[", #"\\\""#, "\u{1}\n", "é😀"]

    init() async throws {
        router = ChattRouter(repository: repository)
        for serial in 1...10 {
            let name = Self.awkward[serial % Self.awkward.count]
            let message = Self.awkward[(serial * 3) % Self.awkward.count] + "\(serial)"
            try await repository.add(NewChatt(name: name, message: message, geodata: serial % 2 == 0 ? "[1,2,\"N\",\"w\"]" : nil))
        }
    }

    private func rows(_ query: String, path: String = "/getmaps") -> [StoredChatt]? {
        let response = router.respond(to: feedRequest(path: path, query: query))
        guard response.status == .ok else { return nil }
        let expected = repository.chatts
        // Find which contiguous run of stored chatts the body encodes, byte for byte.
        for start in 0...expected.count {
            for end in start...expected.count {
                let slice = Array(expected[start..<end])
                let encoded = path == "/getmaps" ? ChattRowEncoder.mapsRows(slice) : ChattRowEncoder.chattsRows(slice)
                if encoded.elementsEqual(response.body) { return slice }
            }
        }
        return []
    }

    private func status(_ query: String) -> Int {
        router.respond(to: feedRequest(query: query)).status.code
    }

    @Test func sinceGivesTheRowsAfterThatChatt() {
        let all = repository.chatts
        #expect(rows("since=" + id(1)) == Array(all[1...]))
        #expect(rows("since=" + id(7)) == Array(all[7...]))
        #expect(rows("since=" + id(9), path: "/getchatts") == [all[9]])
        #expect(rows("since=" + id(10)) == [])
    }

    @Test func limitGivesTheFirstRows() {
        let all = repository.chatts
        #expect(rows("limit=3") == Array(all[..<3]))
        #expect(rows("limit=1") == [all[0]])
        #expect(rows("limit=0") == [])
        #expect(rows("limit=010", path: "/getchatts") == all)
    }

    @Test func sinceAndLimitCombine() {
        let all = repository.chatts
        #expect(rows("since=\(id(2))&limit=3") == Array(all[2..<5]))
        #expect(rows("limit=3&since=\(id(8))") == Array(all[8..<10]))
        #expect(rows("limit=0&since=\(id(8))") == [])
    }

    @Test func upperCaseIdsAndOtherKeysAreAccepted() {
        let all = repository.chatts
        #expect(rows("since=" + id(5).uppercased()) == Array(all[5...]))
        #expect(rows("x=1&since=\(id(5))&&y&limit=2&z=") == Array(all[5..<7]))
    }

    @Test func aLimitCoveringEverythingIsTheWholeSharedFeed() {
        let whole = router.respond(to: feedRequest())
        #expect(router.respond(to: feedRequest(query: "limit=999999999")) == whole)
        let zipped = router.respond(to: feedRequest(query: "limit=10", ("Accept-Encoding", "gzip")))
        #expect(zipped.headers["Content-Encoding"] == "gzip")
    }

    @Test func slicesHaveTheirOwnTagAndAnswer304() throws {
        let slice = router.respond(to: feedRequest(query: "since=" + id(4), ("Accept-Encoding", "gzip")))
        #expect(slice.headers["Content-Encoding"] == nil, "slices are sent plain")
        #expect(slice.headers["Vary"] == "Accept-Encoding")
        let etag = try #require(slice.headers["ETag"])
        #expect(etag != router.respond(to: feedRequest()).headers["ETag"])
        let again = router.respond(to: feedRequest(query: "since=" + id(4), ("If-None-Match", etag)))
        #expect(again.status == .notModified)
    }

    @Test(arguments: [
        "since=0", "since=", "since", "since=\(id(1))x", "since=\(id(1).dropLast())", "since=zz000000-0000-4000-8000-000000000001",
        "since=00000000_0000-4000-8000-000000000001", "since=\(id(1))&since=\(id(2))", "since=%30" + id(1).dropFirst(),
    ])
    func malformedSinceIs400(_ query: String) {
        let response = router.respond(to: feedRequest(query: query))
        #expect(response.status.code == 400)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"error":"since must be a chatt id"}"#)
    }

    @Test(arguments: ["limit=-1", "limit=1.5", "limit=", "limit", "limit=1000000000", "limit=+1", "limit=1&limit=2",
                      "limit=0x10", "limit= 1"])
    func malformedLimitIs400(_ query: String) {
        #expect(status(query) == 400)
    }

    @Test func anUnknownSinceIs404() {
        let response = router.respond(to: feedRequest(query: "since=11111111-2222-4333-8444-555555555555"))
        #expect(response.status == .notFound)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"error":"since names no chatt in the feed"}"#)
    }

    @Test func queryErrorsNeedNoDatabase() {
        repository.fail(with: .unavailable("down"))
        #expect(router.respondImmediately(to: feedRequest(query: "limit=x"))?.status.code == 400)
    }

    @Test func slicesAreNeverMadeOnTheIOQueue() {
        // A slice copies and hashes part of the feed, megabytes on a big store: the request's task does it, off
        // the I/O queue.
        router.feedCache.setNotificationsTrusted(true)
        _ = router.respond(to: feedRequest())
        #expect(router.respondImmediately(to: feedRequest()) != nil, "the whole current feed is served at once")
        let since = feedRequest(query: "since=" + id(3))
        let limit = feedRequest(query: "limit=2")
        #expect(router.respondImmediately(to: limit) == nil)
        #expect(router.respondImmediately(to: since) == nil)
        #expect(router.respond(to: since).status == .ok && router.respond(to: limit).status == .ok)
        #expect(router.respondImmediately(to: since) == nil, "not even once the row index exists")
    }

    @Test func rowRangesSliceTheBodyExactly() async throws {
        let chatts = repository.chatts
        let feed = try await ChattFeedCache().feed(.maps, from: repository)
        #expect(feed.rowCount == 10)
        for start in 0...10 {
            for end in start...10 {
                #expect(feed.rows(start..<end).bytes == ChattRowEncoder.mapsRows(Array(chatts[start..<end])))
            }
        }
    }

    @Test func aSliceHoldsNoBytesOfItsOwnButItsBrackets() async throws {
        // docs/API.md: no private copy per connection. Every segment of a slice but its brackets lies in the
        // feed body's own storage, so a hundred readers of `since` answers hold what one does.
        let feed = try await ChattFeedCache().feed(.maps, from: repository)
        let whole = feed.identity.body.segments.map { segment in
            segment.withUnsafeBytes { UInt(bitPattern: $0.baseAddress!)..<(UInt(bitPattern: $0.baseAddress!) + UInt($0.count)) }
        }
        for range in [3..<10, 0..<1, 4..<7] {
            let slice = feed.rows(range)
            #expect(slice.segments.count >= 3)
            for segment in slice.segments.dropFirst().dropLast() {
                let start = segment.withUnsafeBytes { UInt(bitPattern: $0.baseAddress!) }
                #expect(whole.contains { $0.contains(start) && $0.upperBound >= start + UInt(segment.count) }, "\(range)")
            }
            #expect(FeedRepresentation(identity: slice).etag == FeedRepresentation(identity: HTTPBody(slice.bytes)).etag)
        }
    }

    @Test func anEmptyFeedSlicesToEmptyArrays() async throws {
        let empty = try await ChattFeedCache().feed(.chatts, from: InMemoryChattRepository())
        #expect(empty.rowCount == 0 && empty.rows(0..<0).bytes == Array("[]".utf8))
        let someID = try #require(ChattID(Substring(id(1))))
        #expect(empty.rowIndex().row(of: someID) == nil)
    }
}
