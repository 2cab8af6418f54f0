import ChangeLog
import ChattFeed
import ChattModel
@testable import ChattStream
import HTTPCore
import Locking
import Testing
import TestSupport
import Viewport

/// A maps stream filtered by a box (`?bbox=`): the chatts located in it and the removals of chatts that were, a
/// keep-alive carrying the stream's position while events outside the box go by, and exact resume from there.
/// The clock is made up; the log's reads are awaited, so nothing sleeps.
@Suite struct StreamBoxTests {
    let store = InMemoryChattRepository()
    let log: ChangeLog
    let clock = Locked(ContinuousClock.now)
    /// Around (lon 2, lat 1), where "inside" chatts are posted; "outside" ones are at (50, 50).
    static let box = BoundingBox(west: 1.5, south: 0.5, east: 2.5, north: 1.5)!
    static let far = ContinuousClock.now + .seconds(3600)

    init() {
        log = ChangeLog(repository: store, pageSize: 100, backfillTicks: 64)
    }

    func hub(capacity: Int = 1 << 20) -> ChattStreamHub {
        ChattStreamHub(
            following: log,
            read: { [store] position, limit, deadline throws(RepositoryError) in
                try await store.log(after: position, limit: limit, before: deadline)
            },
            capacity: capacity, readLimit: 100, heartbeat: .seconds(15), now: { [clock] in clock.withLock { $0 } })
    }

    /// Posts a chatt named `name`, inside the box, outside it, or with no location, and waits for the log.
    func post(_ name: String, _ place: String) async throws {
        let geodata: String? =
            switch place {
            case "inside": #"[1,2,"N","w"]"#
            case "outside": #"[50,50,"N","w"]"#
            default: nil
            }
        try await store.add(NewChatt(name: name, message: "m", geodata: geodata))
        _ = try await log.synced(before: Self.far)
    }

    func id(of name: String) -> String {
        store.chatts.first { $0.name == name }!.id
    }

    static func names(_ text: String) -> [String] {
        text.split(separator: "\n").filter { $0.hasPrefix("data: [\"") }.map { line in
            String(line.dropFirst(8).prefix { $0 != "\"" })
        }
    }

    @Test func aFilteredSubscriberGetsTheChattsInItsBoxAndTheRemovalsOfThoseAlone() async throws {
        let hub = hub()
        _ = try await log.synced(before: Self.far)
        let filtered = try await hub.subscribe(.maps, in: Self.box, after: nil, before: Self.far)
        let everything = try await hub.subscribe(.maps, after: nil, before: Self.far)
        filtered.open(wake: {})
        everything.open(wake: {})
        try await post("in1", "inside")
        try await post("out1", "outside")
        try await post("none1", "nowhere")
        try await post("in2", "inside")
        let sent = ChattStreamHubTests.drain(filtered).text
        #expect(Self.names(sent) == ["in1", "in2"])
        #expect(Self.names(ChattStreamHubTests.drain(everything).text) == ["in1", "out1", "none1", "in2"])
        for name in ["out1", "in1", "none1"] { #expect(store.remove(id: id(of: name))) }
        _ = try await log.synced(before: Self.far)
        let removals = ChattStreamHubTests.drain(filtered).text
        #expect(removals.components(separatedBy: "event: delete").count - 1 == 1, "only in1 was inside: \(removals)")
        #expect(removals.contains(#"data: ""# + id(ofRemoved: 1) + #"""#))
        #expect(ChattStreamHubTests.drain(everything).text.components(separatedBy: "event: delete").count - 1 == 3)
    }

    /// The id the in-memory store gave its `serial`th chatt.
    func id(ofRemoved serial: Int) -> String {
        "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - String(serial).count) + "\(serial)"
    }

    @Test func quietInItsBoxItIsToldWhereTheStreamStandsAndResumingThereMissesNothing() async throws {
        let hub = hub()
        _ = try await log.synced(before: Self.far)
        let filtered = try await hub.subscribe(.maps, in: Self.box, after: nil, before: Self.far)
        let watcher = try await hub.subscribe(.maps, after: nil, before: Self.far)
        let wakes = ChattStreamHubTests.Wakes()
        filtered.open(wake: wakes.wake)
        watcher.open(wake: {})
        try await post("in1", "inside")
        let first = ChattStreamHubTests.drain(filtered).text
        #expect(Self.names(first) == ["in1"])
        // Busy outside the box: the log is never quiet, so no heartbeat entry; the subscriber gets nothing.
        for round in 0..<3 {
            clock.withLock { $0 += .seconds(4) }
            try await post("out\(round)", "outside")
            hub.tick()
            #expect(ChattStreamHubTests.drain(filtered).text.isEmpty)
        }
        clock.withLock { $0 += .seconds(2) }
        try await post("out3", "outside")
        hub.tick()
        #expect(wakes.count.withLock { $0 } >= 1)
        let keepAlive = ChattStreamHubTests.drain(filtered).text
        let position = try #require(ChattStreamHubTests.ids(keepAlive).first)
        #expect(keepAlive == "id: \(position)\n\n", "an id and no data: the client moves, nothing is dispatched")
        #expect(position == ChattStreamHubTests.ids(ChattStreamHubTests.drain(watcher).text).last, "out3's position")
        // Resuming from there gets the next chatt in the box, once; from before the first, in1 again.
        try await post("in2", "inside")
        let resumed = try await hub.subscribe(
            .maps, in: Self.box, after: .position(LogPosition(text: position)!), before: Self.far)
        resumed.open(wake: {})
        #expect(Self.names(ChattStreamHubTests.drain(resumed).text) == ["in2"])
    }

    @Test func aResumeFromTheStoreIsFilteredToo() async throws {
        let hub = hub(capacity: 300)
        _ = try await log.synced(before: Self.far)
        let watcher = try await hub.subscribe(.maps, after: nil, before: Self.far)
        watcher.open(wake: {})
        try await post("before", "inside")
        let start = try #require(ChattStreamHubTests.ids(ChattStreamHubTests.drain(watcher).text).last.flatMap {
            LogPosition(text: $0)
        })
        for round in 0..<5 { try await post("out\(round)", "outside") }
        try await post("in1", "inside")
        #expect(hub.state.withLock { start.precedes($0.log.coveredFrom) }, "the log no longer holds the start")
        let resumed = try await hub.subscribe(.maps, in: Self.box, after: .position(start), before: Self.far)
        resumed.open(wake: {})
        #expect(Self.names(ChattStreamHubTests.drain(resumed).text) == ["in1"])
    }
}
