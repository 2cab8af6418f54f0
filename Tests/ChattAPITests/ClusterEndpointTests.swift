@testable import ChattAPI
@testable import ChattFeed
import ChattModel
import HTTPCore
import JSON
import TestSupport
import Testing

/// `GET /getmaps/clusters?bbox=...&zoom=z`: the box's located chatts counted into a zoom's cells, as GeoJSON.
@Suite struct ClusterEndpointTests {
    let repository = InMemoryChattRepository()
    let router: ChattRouter

    init() async throws {
        router = ChattRouter(feed: ChattFeed(repository: repository))
        // Two chatts a few metres apart on campus, one in Detroit, one with no location, one in Fiji.
        for (name, geodata) in [
            ("a", "[42.2808,-83.7430,\"North\",\"walking\"]"), ("b", "[42.2809,-83.7431,\"East\",\"running\"]"),
            ("c", "[42.3314,-83.0458,\"S\",\"w\"]"), ("d", nil), ("e", "[-17.7134,178.065,\"W\",\"s\"]"),
        ] {
            try await repository.add(NewChatt(name: name, message: "from \(name)", geodata: geodata))
        }
    }

    private func features(_ query: String) throws -> [JSONValue] {
        let response = router.respond(to: feedRequest(path: "/getmaps/clusters", query: query))
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"] == "application/geo+json")
        let value = try JSONParser.parse(response.body.bytes)
        #expect(value["type"] == .string("FeatureCollection"))
        guard case .array(let features)? = value["features"] else { return [] }
        return features
    }

    @Test func zoomedOutNearbyChattsAreOneCluster() throws {
        let found = try features("bbox=-84,42,-83,43&zoom=8")
        #expect(found.count == 2)
        let cluster = try #require(found.first { $0["properties"]?["cluster"] == .bool(true) })
        #expect(cluster["properties"]?["point_count"] == .number(JSONNumber(literal: "2", value: 2)))
        let single = try #require(found.first { $0["properties"]?["cluster"] == nil })
        #expect(single["properties"]?["name"] == .string("c"))
        #expect(single["properties"]?["facing"] == .string("S"))
        let coordinates: JSONValue = .array([
            .number(JSONNumber(literal: "-83.0458", value: -83.0458)),
            .number(JSONNumber(literal: "42.3314", value: 42.3314)),
        ])
        #expect(single["geometry"]?["coordinates"] == coordinates, "a lone chatt stands where it was posted")
    }

    @Test func zoomedInEveryChattStandsAlone() throws {
        let found = try features("zoom=20&bbox=-83.7432,42.2807,-83.7429,42.2810")
        let names = found.compactMap { feature -> String? in
            guard case .string(let name)? = feature["properties"]?["name"] else { return nil }
            return name
        }
        #expect(Set(names) == ["a", "b"] && found.count == 2, "74 pixels apart at zoom 20: two cells")
        #expect(found.allSatisfy { $0["properties"]?["cluster"] == nil && $0["properties"]?["speed"] != nil })
    }

    @Test func aBoxAcrossTheAntimeridianFindsFiji() throws {
        let found = try features("bbox=170,-20,-170,-10&zoom=5")
        #expect(found.count == 1 && found.first?["properties"]?["name"] == .string("e"))
    }

    @Test func withoutParametersItIsTheWholeMapAtTheZoomThatFitsAScreen() throws {
        func counts(_ query: String) throws -> [Int] {
            try features(query).map { feature in
                guard case .number(let count)? = feature["properties"]?["point_count"] else { return 1 }
                return Int(count.value)
            }.sorted()
        }
        #expect(try counts("") == [1, 3], "zoom 2 (1024 pixels): campus and Detroit in one cell, Fiji in another")
        #expect(try counts("bbox=-84,42,-83,43") == [1, 2], "zoom 10 for a degree: campus apart from Detroit")
        #expect(try counts("zoom=0&bbox=-84,42,-83,43") == [3])
    }

    @Test func aLoneChattsPropertiesAreItsStringsSettledOrNot() async throws {
        let (name, message) = (#"q"b\"#, "line\nbreak\u{1}\u{7F} é 😀")
        let geodata = #"[10.5, 20.25, "say \"hi\"", "\u0041\\"]"#
        try await repository.add(NewChatt(name: name, message: message, geodata: geodata))
        func properties(_ query: String) throws -> JSONValue? {
            let found = try features(query)
            #expect(found.count == 1)
            return found.first?["properties"]
        }
        // Settled by the feed's first read.
        let settled = try properties("bbox=20.2,10.4,20.3,10.6&zoom=12")
        #expect(settled?["name"] == .string(name) && settled?["message"] == .string(message))
        #expect(settled?["facing"] == .string(#"say "hi""#) && settled?["speed"] == .string(#"A\"#))
        #expect(settled?["id"] == .string(repository.chatts.last!.id))
        #expect(settled?["timestamp"] == .string(repository.chatts.last!.timestamp))
        // Posted after it: the feed's tail.
        router.feed.listening(true)
        try await repository.add(NewChatt(name: "t\\", message: "\"", geodata: "[-10,-20,\"N\",\"\"]"))
        try await router.feed.log.noticedAndRead()
        let tail = try properties("bbox=-20.1,-10.1,-19.9,-9.9&zoom=12")
        #expect(tail?["name"] == .string("t\\") && tail?["message"] == .string("\""))
        #expect(tail?["facing"] == .string("N") && tail?["speed"] == .string(""))
    }

    @Test func theWholeMapIsAnsweredAsAnyBoxIsAndFollowsPosts() async throws {
        func total(_ query: String) throws -> Int {
            try features(query).map { feature in
                guard case .number(let count)? = feature["properties"]?["point_count"] else { return 1 }
                return Int(count.value)
            }.reduce(0, +)
        }
        let whole = router.respond(to: feedRequest(path: "/getmaps/clusters", query: "zoom=3"))
        let asked = router.respond(to: feedRequest(path: "/getmaps/clusters", query: "bbox=-180,-90,180,90&zoom=3"))
        #expect(whole.body == asked.body && whole.headers["ETag"] == asked.headers["ETag"])
        let zipped = router.respond(to: feedRequest(
            path: "/getmaps/clusters", query: "zoom=3", ("Accept-Encoding", "gzip")))
        #expect(zipped.headers["Content-Encoding"] == "gzip" && gunzip(zipped.body.bytes) == whole.body.bytes)
        #expect(zipped.headers["Content-Type"] == "application/geo+json")
        #expect(try total("zoom=3") == 4)
        // A post makes a new version, whose whole map counts it.
        router.feed.listening(true)
        try await repository.add(NewChatt(name: "f", message: "new", geodata: "[10,10,\"N\",\"w\"]"))
        try await router.feed.log.noticedAndRead()
        #expect(try total("zoom=3") == 5)
        let later = router.respond(to: feedRequest(path: "/getmaps/clusters", query: "zoom=3"))
        #expect(later.headers["ETag"] != whole.headers["ETag"])
    }

    @Test(arguments: [
        "bbox=0,0,1,1&zoom=21", "bbox=0,0,1,1&zoom=-1", "bbox=0,0,1,1&zoom=1.5",
        "bbox=0,0,1,1&zoom=", "bbox=0,0,1,1&zoom=3&zoom=3", "bbox=0,0,1&zoom=3", "bbox=-180,-85,180,85&zoom=7",
        "bbox=0,0,1,1&zoom=003",
    ])
    func malformedIs400(_ query: String) {
        let response = router.respond(to: feedRequest(path: "/getmaps/clusters", query: query))
        #expect(response.status.code == 400)
        #expect(response.headers["Content-Type"] == "application/json")
    }

    @Test func isTaggedAndGzipped() throws {
        let plain = router.respond(to: feedRequest(path: "/getmaps/clusters/", query: "bbox=-180,-85,180,85&zoom=2"))
        let etag = try #require(plain.headers["ETag"])
        let zipped = router.respond(to: feedRequest(
            path: "/getmaps/clusters", query: "bbox=-180,-85,180,85&zoom=2", ("Accept-Encoding", "gzip")))
        #expect(zipped.headers["Content-Encoding"] == "gzip" && gunzip(zipped.body.bytes) == plain.body.bytes)
        #expect(zipped.headers["Content-Type"] == "application/geo+json")
        let again = router.respond(to: feedRequest(
            path: "/getmaps/clusters", query: "bbox=-180,-85,180,85&zoom=2", ("If-None-Match", etag)))
        #expect(again.status == .notModified)
        let post = router.respond(to: feedRequest(path: "/getmaps/clusters", query: "zoom=1", method: .POST))
        #expect(post.status == .methodNotAllowed)
    }
}
