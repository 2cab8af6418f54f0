import ChangeLog
import ChattFeed
import ChattModel
@testable import ChattStream
import HTTPCore
import Locking
import Testing
import TestSupport

/// The hub following the change log of a store kept in memory: what each subscriber is sent, from where, and when
/// it is cut or reset. The clock is made up; the log's reads are awaited (`settle`), so nothing sleeps.
@Suite struct ChattStreamHubTests {
    /// Counts a subscriber's wakes.
    final class Wakes: Sendable {
        let count = Locked(0)
        var wake: @Sendable () -> Void { { [count] in count.withLock { $0 += 1 } } }
    }

    let store = InMemoryChattRepository()
    let log: ChangeLog
    let clock = Locked(ContinuousClock.now)

    init() {
        log = ChangeLog(repository: store, pageSize: 100, backfillTicks: 64)
    }

    func hub(capacity: Int = 1 << 20, readLimit: Int = 100) -> ChattStreamHub {
        ChattStreamHub(
            following: log,
            read: { [store] position, limit, deadline throws(RepositoryError) in
                try await store.log(after: position, limit: limit, before: deadline)
            },
            capacity: capacity, readLimit: readLimit, heartbeat: .seconds(15),
            now: { [clock] in clock.withLock { $0 } })
    }

    static let far = ContinuousClock.now + .seconds(3600)

    /// Posts each of `names`, as a batch of its own each, and waits for the log to take it in: a tick each.
    func post(_ names: String...) async throws {
        for name in names {
            try await store.add(NewChatt(name: name, message: "hi \(name)", geodata: "[1,2,3,4]"))
            try await settle()
        }
    }

    /// Commits each of `names` as another writer would (nobody is told): the next tick takes them all.
    func commitElsewhere(_ names: String...) {
        for name in names {
            let sequence = store.chatts.count + 1
            store.storeCommitted(
                NewChatt(name: name, message: "hi \(name)", geodata: "[1,2,3,4]"),
                timestamp: "2026-03-25T08:11:59.\(100_000 + sequence)Z")
        }
    }

    /// Waits until the log has told its followers everything the store holds.
    func settle() async throws {
        _ = try await log.synced(before: Self.far)
    }

    /// The position of the chatt with sequence number `seq` in tick `tick` (before any restore).
    static func position(_ tick: Int64, _ seq: Int64) -> LogPosition {
        LogPosition(tick: tick, token: InMemoryChattRepository.token(of: tick), seq: seq)
    }

    /// Its text, an event's id.
    static func id(_ tick: Int64, _ seq: Int64) -> String {
        position(tick, seq).description
    }

    /// Everything `subscription` has ready, as text.
    static func drain(_ subscription: StreamSubscription) -> (text: String, last: StreamPull) {
        var text = ""
        while true {
            let pull = subscription.next(limit: 1 << 16)
            guard case .bytes(let body) = pull else { return (text, pull) }
            text += String(decoding: body.bytes, as: UTF8.self)
        }
    }

    /// The event ids in `text`.
    static func ids(_ text: String) -> [String] {
        text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }
    }

    static let reset = "event: reset\ndata: {}\n\n"

    @Test func aSubscriberGetsEachChattOnceInLogOrderWithTheFeedsRowShape() async throws {
        try await post("old")
        let hub = hub()
        let maps = try await hub.subscribe(.maps, after: nil, before: Self.far)
        let chatts = try await hub.subscribe(.chatts, after: nil, before: Self.far)
        let wakes = Wakes()
        maps.open(wake: wakes.wake)
        chatts.open(wake: {})
        #expect(Self.drain(maps).last == .idle, "it starts at the end: the old chatt is not sent")
        commitElsewhere("ann", "bob")
        try await settle()
        #expect(wakes.count.withLock { $0 } == 1, "one wake for the tick")
        let sent = Self.drain(maps).text
        #expect(Self.ids(sent) == [Self.id(3, 2), Self.id(3, 3)])
        #expect(sent.hasPrefix("id: \(Self.id(3, 2))\ndata: [\"ann\",\"hi ann\","))
        #expect(sent.contains(#""2026-03-25T08:11:59.100002Z","[1,2,3,4]"]"# + "\n\n"))
        let rows = Self.drain(chatts).text.split(separator: "\n").filter { $0.hasPrefix("data: ") }
        #expect(rows.first
            == #"data: ["ann","hi ann","00000000-0000-4000-8000-000000000002","2026-03-25T08:11:59.100002Z"]"#)
        #expect(Self.drain(maps).text.isEmpty)
        try await settle()
        #expect(Self.drain(maps).text.isEmpty, "nothing twice")
    }

    /// The removal event of the chatt the in-memory store numbered `serial`, at `id`.
    static func removal(_ serial: Int, at id: String) -> String {
        let chatt = "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - String(serial).count) + "\(serial)"
        return "event: delete\nid: \(id)\ndata: \"\(chatt)\"\n\n"
    }

    @Test func aRemovalIsAnEventInLogOrderLiveAndOnAResumeFromTheStoreAndResetsNobody() async throws {
        let hub = hub(capacity: 400)
        try await settle()
        try await post("a", "b")
        let live = try await hub.subscribe(.maps, after: nil, before: Self.far)
        live.open(wake: {})
        // Tick 4: chatt 3 committed elsewhere, then chatt 1's removal (numbered 4).
        commitElsewhere("c")
        #expect(store.remove(id: "00000000-0000-4000-8000-000000000001"))
        try await settle()
        let sent = Self.drain(live).text
        #expect(Self.ids(sent) == [Self.id(4, 3), Self.id(4, 4)])
        #expect(sent.hasSuffix("\n\n" + Self.removal(1, at: Self.id(4, 4))))
        try await post("d", "e", "f")
        #expect(Self.ids(Self.drain(live).text) == [Self.id(5, 5), Self.id(6, 6), Self.id(7, 7)])
        // Tick 4 fell off the log: a client resuming from tick 3 gets it from the store, the removal in its place.
        #expect(hub.state.withLock { $0.log.coveredFrom.tick } >= 4)
        let resumed = try await hub.subscribe(.chatts, after: .position(Self.position(3, 2)), before: Self.far)
        resumed.open(wake: {})
        let again = Self.drain(resumed).text
        #expect(Self.ids(again) == [Self.id(4, 3), Self.id(4, 4), Self.id(5, 5), Self.id(6, 6), Self.id(7, 7)])
        #expect(again.contains("\n\n" + Self.removal(1, at: Self.id(4, 4)) + "id: \(Self.id(5, 5))\n"))
        #expect(!sent.contains("reset") && !again.contains("reset"))
    }

    @Test func aResumeWithinTheLogGetsExactlyTheLaterChattsAndOneFromFurtherBackReadsTheStoreFirst() async throws {
        let hub = hub(capacity: 500)
        try await settle()
        try await post("a", "b", "c", "d", "e", "f")
        // Ticks 2 to 7 hold chatts 1 to 6.
        let near = try await hub.subscribe(.chatts, after: .position(Self.position(5, 4)), before: Self.far)
        near.open(wake: {})
        #expect(Self.ids(Self.drain(near).text) == [Self.id(6, 5), Self.id(7, 6)])
        #expect(hub.state.withLock { $0.log.coveredFrom.tick } > 2, "the oldest events fell off")
        let readsBefore = store.logReads
        let far = try await hub.subscribe(.chatts, after: .position(Self.position(2, 1)), before: Self.far)
        far.open(wake: {})
        #expect(store.logReads == readsBefore + 1)
        #expect(Self.ids(Self.drain(far).text) == (3...7).map { Self.id($0, $0 - 1) })
        try await post("g")
        #expect(Self.ids(Self.drain(far).text) == [Self.id(8, 7)])
        #expect(Self.ids(Self.drain(near).text) == [Self.id(8, 7)])
    }

    @Test func aNewHubHoldsTheRecentChattsSoClientsResumingAfterARestartNeedNoReadOfTheirOwn() async throws {
        try await post("r0", "r1", "r2", "r3", "r4")
        let hub = hub(capacity: 4_000)
        try await settle()
        let reads = store.logReads
        let subscription = try await hub.subscribe(.chatts, after: .position(Self.position(3, 2)), before: Self.far)
        #expect(store.logReads == reads, "the log started with the recent ticks: no read for the client")
        subscription.open(wake: {})
        #expect(Self.ids(Self.drain(subscription).text) == [Self.id(4, 3), Self.id(5, 4), Self.id(6, 5)])
        let fresh = try await hub.subscribe(.chatts, after: nil, before: Self.far)
        fresh.open(wake: {})
        #expect(Self.drain(fresh).text.isEmpty, "without a position: from the end, not the recent chatts")
    }

    @Test func aClientAtTheTickAnEditMadeResumesAfterItWithoutAReadOrAReset() async throws {
        let hub = hub()
        try await settle()
        store.edit()
        try await settle()
        // The edit made tick 2, with no chatt; a client that read the feed there resumes from it.
        let position = LogPosition(tick: 2, token: InMemoryChattRepository.token(of: 2))
        #expect(hub.state.withLock { $0.position } == position)
        try await post("a")
        let reads = store.logReads
        let subscription = try await hub.subscribe(.chatts, after: .position(position), before: Self.far)
        #expect(store.logReads == reads)
        subscription.open(wake: {})
        #expect(Self.ids(Self.drain(subscription).text) == [Self.id(3, 1)])
    }

    @Test func aClientTooFarBehindOfAnotherLogOrFromBeforeTicksIsResetAndItsStreamEnds() async throws {
        let hub = hub(capacity: 300, readLimit: 2)
        try await settle()
        try await post("a", "b", "c", "d")
        let behind = StreamResume.position(LogPosition(tick: 1, token: InMemoryChattRepository.token(of: 1)))
        let stranger = StreamResume.position(LogPosition(tick: 4, token: 7, seq: 3))
        let ahead = StreamResume.position(LogPosition(tick: 99, token: 7))
        for resume in [behind, stranger, ahead, .fromBeforeTicks] {
            let subscription = try await hub.subscribe(.chatts, after: resume, before: Self.far)
            let (text, last) = Self.drain(subscription)
            #expect(text == Self.reset && last == .ended, "\(resume)")
        }
    }

    @Test func anEditResetsEverySubscriberAndNewOnesStartAfterIt() async throws {
        let hub = hub()
        try await settle()
        let subscription = try await hub.subscribe(.maps, after: nil, before: Self.far)
        let wakes = Wakes()
        subscription.open(wake: wakes.wake)
        #expect(Self.drain(subscription).last == .idle)
        let before = try #require(hub.state.withLock { $0.position })
        store.edit()
        try await settle()
        #expect(wakes.count.withLock { $0 } == 1)
        #expect(Self.drain(subscription) == (Self.reset, .ended))
        let old = try await hub.subscribe(.maps, after: .position(before), before: Self.far)
        #expect(Self.drain(old).text == Self.reset, "a position from before the edit")
        let fresh = try await hub.subscribe(.maps, after: nil, before: Self.far)
        fresh.open(wake: {})
        try await post("z")
        #expect(Self.ids(Self.drain(fresh).text) == [Self.id(3, 1)])
    }

    @Test func aStoreThatWentBackwardsResetsEverySubscriberInsteadOfSkipping() async throws {
        let hub = hub()
        try await post("a")
        let subscription = try await hub.subscribe(.chatts, after: nil, before: Self.far)
        subscription.open(wake: {})
        try await post("b")
        let last = try #require(Self.ids(Self.drain(subscription).text).last)
        let seen = try #require(LogPosition(text: last))
        // Restored from a backup taken at tick 2: tick 3 is gone, and the next tick 3 is another.
        store.restore(toTick: 2)
        try await post("c")
        #expect(Self.drain(subscription) == (Self.reset, .ended))
        let resumed = try await hub.subscribe(.chatts, after: .position(seen), before: Self.far)
        #expect(Self.drain(resumed).text == Self.reset, "its tick 3 is not the store's tick 3")
    }

    @Test func eventsFollowedWithNobodySubscribedAreEncodedOnlyOnceSomeoneIs() async throws {
        let hub = hub()
        try await settle()
        try await post("a", "b")
        let unencoded = { hub.state.withLock { state in (0..<2).map { state.log.entry(at: $0).isEncoded } } }
        #expect(unencoded() == [false, false], "nobody to send them to")
        let subscription = try await hub.subscribe(.maps, after: .position(Self.position(2, 1)), before: Self.far)
        subscription.open(wake: {})
        #expect(unencoded() == [true, true], "encoded once, for every subscriber")
        #expect(Self.drain(subscription).text
            == "id: \(Self.id(3, 2))\ndata: [\"b\",\"hi b\",\"00000000-0000-4000-8000-000000000002\","
                + "\"2026-03-25T08:11:59.100002Z\",\"[1,2,3,4]\"]\n\n")
        try await post("c")
        #expect(hub.state.withLock { $0.log.entry(at: 2).isEncoded }, "encoded as it comes while someone is subscribed")
    }

    @Test func aSubscriberThatStopsReadingIsCutWhenTheLogPassesItAndTheLogStaysWithinItsCapacity() async throws {
        let hub = hub(capacity: 1_000)
        try await settle()
        let idle = try await hub.subscribe(.maps, after: nil, before: Self.far)
        let wakes = Wakes()
        idle.open(wake: wakes.wake)
        let reader = try await hub.subscribe(.maps, after: nil, before: Self.far)
        reader.open(wake: {})
        for index in 0..<40 {
            try await post("n\(index)")
            _ = Self.drain(reader)
            #expect(hub.state.withLock { $0.log.size } <= 1_000)
        }
        #expect(wakes.count.withLock { $0 } >= 1, "told it was cut, so its connection closes")
        #expect(idle.next(limit: 0) == .cut)
        #expect(idle.next(limit: 1 << 16) == .cut)
        #expect(Self.drain(reader).last == .idle, "the reader goes on")
        idle.close()
        #expect(hub.subscriberCount == 1)
    }

    @Test func aHeartbeatGoesOutWhenTheLogHasBeenQuietForAlmostTheHeartbeatAndWakesTheWaiting() async throws {
        let hub = hub()
        let subscription = try await hub.subscribe(.chatts, after: nil, before: Self.far)
        let wakes = Wakes()
        subscription.open(wake: wakes.wake)
        #expect(Self.drain(subscription).last == .idle)
        clock.withLock { $0 += .seconds(13) }
        hub.tick()
        #expect(wakes.count.withLock { $0 } == 0)
        clock.withLock { $0 += .seconds(1) }
        hub.tick()
        #expect(wakes.count.withLock { $0 } == 1)
        #expect(Self.drain(subscription).text == ":\n")
        hub.tick()
        #expect(Self.drain(subscription).text.isEmpty, "not again until quiet again")
        #expect(ChattStreamHub.tickInterval(.seconds(15)) == .seconds(1))
        #expect(ChattStreamHub.tickInterval(.seconds(1)) == .milliseconds(500))
    }

    @Test func aSubscribeFailsWithTheStoresFailureNeverAReset() async throws {
        store.fail(with: .unavailable("down"))
        let hub = hub(capacity: 200)
        await #expect(throws: RepositoryError.unavailable("down")) {
            _ = try await hub.subscribe(.chatts, after: nil, before: Self.far)
        }
        store.fail(with: nil)
        try await post("a", "b", "c")
        _ = try await hub.subscribe(.chatts, after: nil, before: Self.far)
        #expect(hub.state.withLock { $0.log.coveredFrom.tick } > 1)
        store.fail(with: .unavailable("down again"))
        await #expect(throws: RepositoryError.unavailable("down again")) {
            let behind = LogPosition(tick: 1, token: InMemoryChattRepository.token(of: 1))
            _ = try await hub.subscribe(.chatts, after: .position(behind), before: Self.far)
        }
    }
}

/// The log alone.
@Suite struct EventLogTests {
    static func position(_ tick: Int64, _ seq: Int64 = LogPosition.wholeTick, token: UInt64 = 7) -> LogPosition {
        LogPosition(tick: tick, token: token, seq: seq)
    }

    static func entry(_ position: LogPosition?, _ size: Int = 20) -> EventLog.Entry {
        let bytes = [UInt8](repeating: UInt8(ascii: "x"), count: size)
        return EventLog.Entry(position: position, maps: bytes, chatts: bytes)
    }

    @Test func aResumeStartsAtTheFirstLaterEventAndOldHeartbeatsAreNotSentAgain() {
        var log = EventLog(capacity: 1_000, from: Self.position(1))
        for position in [nil, nil, Self.position(2, 5), nil, Self.position(2, 6), nil] {
            log.append(Self.entry(position))
        }
        #expect(log.serial(after: Self.position(1)) == 2)
        #expect(log.serial(after: Self.position(2, 5)) == 4)
        #expect(log.serial(after: Self.position(2, 6)) == log.endSerial, "nothing later: past the last heartbeat")
        #expect(log.serial(after: Self.position(2)) == log.endSerial, "the whole tick")
        #expect(log.serial(after: Self.position(2, 5, token: 8)) == nil, "tick 2 under another token")
        #expect(log.serial(after: Self.position(1, token: 8)) == nil, "where the log begins, under another token")
    }

    @Test func whileNobodyIsSubscribedTheLogKeepsOnlyItsIdleCapacity() {
        var log = EventLog(capacity: 1 << 20, from: Self.position(1))
        for seq in 1...2_000 { log.append(Self.entry(Self.position(2, Int64(seq)), 100), idle: true) }
        #expect(log.size <= EventLog.idleCapacity && log.size > EventLog.idleCapacity - 100)
        for seq in 2_001...4_000 { log.append(Self.entry(Self.position(2, Int64(seq)), 100)) }
        #expect(log.size > EventLog.idleCapacity * 2, "with subscribers, up to the whole capacity")
        #expect(log.coveredFrom.seq > 1, "the oldest fell off while idle")
    }

    @Test func aTickTheLogHoldsNothingOfIsNoneOfItsOwn() {
        var log = EventLog(capacity: 1_000, from: Self.position(1))
        log.append(Self.entry(Self.position(3, 9)))
        #expect(log.serial(after: Self.position(2)) == nil, "tick 2 would have a marker or a chatt")
        log.append(.marker(Self.position(4)))
        #expect(log.serial(after: Self.position(4)) == log.endSerial, "a marker names its tick")
        #expect(log.read(from: 1, .maps, limit: 100)?.body.isEmpty == true, "and sends nothing")
    }

    @Test func anEntryAppendedUnencodedSendsTheSameBytesAndCountsItsOwnSizeOnceEncoded() {
        let chatt = StoredChatt(
            name: "ann", message: "say \"hi\"\n", id: "00000000-0000-4000-8000-000000000001",
            timestamp: "2026-03-25T08:11:59.100001Z", geodata: nil)
        var log = EventLog(capacity: 1_000, from: Self.position(1))
        log.append(.event(chatt, at: Self.position(2, 1), deferred: true))
        log.append(.event(chatt, at: Self.position(3, 2), deferred: false))
        #expect(!log.entry(at: 0).isEncoded && log.entry(at: 1).isEncoded)
        #expect(log.entry(at: 0).size == StreamEvent.estimatedSize(of: chatt), "counted at its estimate")
        let read = { log.read(from: 0, .maps, limit: 1_000)?.body.bytes }
        let before = read()
        log.encodeAll()
        #expect(read() == before, "the same bytes, encoded when read or before")
        #expect(log.entry(at: 0).isEncoded)
        #expect(log.size == 2 * log.entry(at: 1).size, "the estimate replaced by the encoding's size")
        let row = #"["ann","say \"hi\"\n","00000000-0000-4000-8000-000000000001","2026-03-25T08:11:59.100001Z",null]"#
        #expect(before.map { String(decoding: $0, as: UTF8.self) }
            == "id: 2.7.1\ndata: \(row)\n\nid: 3.7.2\ndata: \(row)\n\n")
    }

    @Test func theOldestEntriesFallOffPastTheCapacityAndTheLogKnowsWhereItBeginsThen() {
        var log = EventLog(capacity: 50, from: Self.position(5))
        for tick: Int64 in 6...9 { log.append(Self.entry(Self.position(tick, tick))) }
        #expect(log.size <= 50 && log.firstSerial == 2 && log.coveredFrom == Self.position(7, 7))
        #expect(log.serial(after: Self.position(7, 7)) == 2)
        #expect(log.read(from: 1, .chatts, limit: 100) == nil, "a reader at a serial that fell off is cut")
        #expect(log.read(from: 2, .chatts, limit: 30)?.next == 3, "about the limit, one at least")
        log.restart(from: Self.position(20))
        #expect(log.size == 0 && log.firstSerial == 4 && log.serial(after: Self.position(20)) == 4)
    }
}

/// Where a client joins, from the hub's state alone.
@Suite struct PlacementTests {
    static func state(at position: LogPosition?, coveredFrom: LogPosition) -> ChattStreamHub.State {
        var state = ChattStreamHub.State(log: EventLog(capacity: 1_000, from: coveredFrom), lastAppend: .now)
        state.position = position
        return state
    }

    @Test func behindAheadUnknownOrAtASerial() {
        let covered = LogPosition(tick: 10, token: 1)
        let state = Self.state(at: LogPosition(tick: 12, token: 3), coveredFrom: covered)
        #expect(state.place(nil) == .at(0))
        #expect(state.place(LogPosition(tick: 9, token: 9)) == .behind, "its token is the store's to check")
        #expect(state.place(LogPosition(tick: 10, token: 1, seq: 4)) == .behind)
        #expect(state.place(covered) == .at(0))
        #expect(state.place(LogPosition(tick: 12, token: 4)) == .unknown, "the hub's own tick under another token")
        #expect(state.place(LogPosition(tick: 13, token: 3)) == .ahead)
        #expect(Self.state(at: nil, coveredFrom: covered).place(nil) == .ahead, "not started: it must read first")
    }
}
