import ChattFeed
import ChattModel
@testable import ChattStream
import HTTPCore
import Locking
import Testing

/// The hub against a store kept in memory: what each subscriber is sent, from where, and when it is cut or reset.
/// The clock is made up; reads of the store are awaited directly, so nothing sleeps.
@Suite struct ChattStreamHubTests {
    /// Chatts in commit order with their counts, and the epoch.
    final class Store: Sendable {
        struct State {
            var epoch: Int64 = 1
            var rows: [SequencedChatt] = []
            var reads = 0
            var failing = false
        }
        let state = Locked(State())

        /// Commits `names` as one batch: their counts follow the last one.
        @discardableResult
        func commit(_ names: String...) -> ChattBatch {
            state.withLock { state in
                let previous = state.rows.last?.commit ?? 0
                let added = names.enumerated().map { offset, name in
                    let commit = previous + Int64(offset) + 1
                    return SequencedChatt(sequence: commit, chatt: Self.chatt(name), commit: commit)
                }
                state.rows += added
                return ChattBatch(added, epoch: state.epoch)
            }
        }

        /// An edit: a new epoch.
        func edit() { state.withLock { $0.epoch += 1 } }

        var position: CommitPosition {
            state.withLock { CommitPosition(epoch: $0.epoch, count: $0.rows.last?.commit ?? 0) }
        }

        var read: ChattStreamHub.Read {
            { [state] count, limit, _ throws(RepositoryError) in
                try state.withLock { state throws(RepositoryError) in
                    state.reads += 1
                    if state.failing { throw .unavailable("down") }
                    let after = state.rows.filter { $0.commit > count }.prefix(limit)
                    return CommittedChatts(
                        chatts: Array(after),
                        position: CommitPosition(epoch: state.epoch, count: state.rows.last?.commit ?? 0))
                }
            }
        }

        static func chatt(_ name: String) -> StoredChatt {
            StoredChatt(
                name: name, message: "hi \(name)", id: "00000000-0000-4000-8000-00000000000\(name.count)",
                timestamp: "2026-12-03T07:00:00.000000Z", geodata: "[1,2,3,4]")
        }
    }

    /// Counts a subscriber's wakes.
    final class Wakes: Sendable {
        let count = Locked(0)
        var wake: @Sendable () -> Void { { [count] in count.withLock { $0 += 1 } } }
    }

    let store = Store()
    let clock = Locked(ContinuousClock.now)

    func hub(capacity: Int = 1 << 20, readLimit: Int = 100) -> ChattStreamHub {
        ChattStreamHub(
            read: store.read, capacity: capacity, readLimit: readLimit, heartbeat: .seconds(15),
            now: { [clock] in clock.withLock { $0 } })
    }

    static let far = ContinuousClock.now + .seconds(3600)

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

    @Test func aSubscriberGetsEachCommitOnceInCommitOrderWithTheFeedsRowShape() async throws {
        store.commit("old")
        let hub = hub()
        let maps = try await hub.subscribe(.maps, after: nil, before: Self.far)
        let chatts = try await hub.subscribe(.chatts, after: nil, before: Self.far)
        let wakes = Wakes()
        maps.open(wake: wakes.wake)
        chatts.open(wake: {})
        #expect(Self.drain(maps).last == .idle, "it starts at the end: the old chatt is not sent")
        let batch = store.commit("ann", "bob")
        hub.committed(batch)
        #expect(wakes.count.withLock { $0 } == 1, "one wake for the batch")
        let sent = Self.drain(maps).text
        #expect(Self.ids(sent) == ["1-2", "1-3"])
        #expect(sent.hasPrefix(#"id: 1-2\#ndata: ["ann","hi ann","#))
        #expect(sent.contains(#""2026-12-03T07:00:00.000000Z","[1,2,3,4]"]\#n\#n"#))
        let rows = Self.drain(chatts).text.split(separator: "\n").filter { $0.hasPrefix("data: ") }
        #expect(rows.first == #"data: ["ann","hi ann","00000000-0000-4000-8000-000000000003","2026-12-03T07:00:00.000000Z"]"#)
        #expect(Self.drain(maps).text.isEmpty)
    }

    @Test func aCommitThatDoesNotFollowTheHubsCountIsReadFromTheStoreWithWhatCameBetween() async throws {
        let hub = hub()
        let subscription = try await hub.subscribe(.chatts, after: nil, before: Self.far)
        subscription.open(wake: {})
        store.commit("other")  // another writer's, not announced yet
        let ours = store.commit("mine")
        #expect(hub.state.withLock { $0.position?.count } == 0)
        hub.committed(ours)
        #expect(Self.drain(subscription).text.isEmpty, "not before what came between is known")
        try await hub.catchUp(before: Self.far)
        #expect(Self.ids(Self.drain(subscription).text) == ["1-1", "1-2"])
        hub.committed(ours)
        try await hub.catchUp(before: Self.far)
        #expect(Self.drain(subscription).text.isEmpty, "nothing twice")
    }

    @Test func aResumeWithinTheLogGetsExactlyTheLaterCommitsAndOneFromFurtherBackReadsTheStoreFirst() async throws {
        let hub = hub(capacity: 400)
        _ = try await hub.subscribe(.chatts, after: nil, before: Self.far)
        for name in ["a", "b", "c", "d", "e", "f"] {
            let batch = store.commit(name)
            hub.committed(batch)
        }
        let near = try await hub.subscribe(.chatts, after: CommitPosition(epoch: 1, count: 4), before: Self.far)
        near.open(wake: {})
        #expect(Self.ids(Self.drain(near).text) == ["1-5", "1-6"])
        #expect(hub.state.withLock { $0.log.coveredFrom } > 1, "the oldest events fell off")
        let readsBefore = store.state.withLock { $0.reads }
        let far = try await hub.subscribe(.chatts, after: CommitPosition(epoch: 1, count: 1), before: Self.far)
        far.open(wake: {})
        #expect(store.state.withLock { $0.reads } == readsBefore + 1)
        #expect(Self.ids(Self.drain(far).text) == ["1-2", "1-3", "1-4", "1-5", "1-6"])
        let batch = store.commit("g")
        hub.committed(batch)
        #expect(Self.ids(Self.drain(far).text) == ["1-7"])
        #expect(Self.ids(Self.drain(near).text) == ["1-7"])
    }

    @Test func aNewHubStartsWithTheLatestChattsInItsLogSoClientsResumingAfterARestartNeedNoReadOfTheirOwn() async throws {
        for index in 0..<5 { store.commit("r\(index)") }
        let hub = hub(capacity: 4_000)
        let subscription = try await hub.subscribe(.chatts, after: CommitPosition(epoch: 1, count: 2), before: Self.far)
        let reads = store.state.withLock { $0.reads }
        #expect(reads == 2, "where the store stands, then the chatts before it: no read for the client")
        subscription.open(wake: {})
        #expect(Self.ids(Self.drain(subscription).text) == ["1-3", "1-4", "1-5"])
        let fresh = try await hub.subscribe(.chatts, after: nil, before: Self.far)
        fresh.open(wake: {})
        #expect(Self.drain(fresh).text.isEmpty, "without a position: from the end, not the backfill")
    }

    @Test func aClientTooFarBehindOrOfAnotherEpochIsResetAndItsStreamEnds() async throws {
        let hub = hub(capacity: 300, readLimit: 2)
        _ = try await hub.subscribe(.chatts, after: nil, before: Self.far)
        for name in ["a", "b", "c", "d"] {
            let batch = store.commit(name)
            hub.committed(batch)
        }
        for position in [CommitPosition(epoch: 1, count: 0), CommitPosition(epoch: 0, count: 4)] {
            let subscription = try await hub.subscribe(.chatts, after: position, before: Self.far)
            let (text, last) = Self.drain(subscription)
            #expect(text == "event: reset\ndata: {}\n\n" && last == .ended, "\(position)")
        }
        let ahead = try await hub.subscribe(.chatts, after: CommitPosition(epoch: 1, count: 99), before: Self.far)
        #expect(Self.drain(ahead).text.hasPrefix("event: reset"), "a position the store never reached")
    }

    @Test func anEditResetsEverySubscriberAndNewOnesStartInTheNewEpoch() async throws {
        let hub = hub()
        let subscription = try await hub.subscribe(.maps, after: nil, before: Self.far)
        let wakes = Wakes()
        subscription.open(wake: wakes.wake)
        #expect(Self.drain(subscription).last == .idle)
        store.edit()
        try await hub.catchUp(before: Self.far)
        #expect(wakes.count.withLock { $0 } == 1)
        #expect(Self.drain(subscription) == ("event: reset\ndata: {}\n\n", .ended))
        let fresh = try await hub.subscribe(.maps, after: CommitPosition(epoch: 2, count: 0), before: Self.far)
        fresh.open(wake: {})
        let batch = store.commit("z")
        hub.committed(batch)
        #expect(Self.ids(Self.drain(fresh).text) == ["2-1"])
    }

    @Test func aSubscriberThatStopsReadingIsCutWhenTheLogPassesItAndTheLogStaysWithinItsCapacity() async throws {
        let hub = hub(capacity: 1_000)
        let idle = try await hub.subscribe(.maps, after: nil, before: Self.far)
        let wakes = Wakes()
        idle.open(wake: wakes.wake)
        let reader = try await hub.subscribe(.maps, after: nil, before: Self.far)
        reader.open(wake: {})
        for index in 0..<40 {
            let batch = store.commit("n\(index)")
            hub.committed(batch)
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

    @Test func aSubscribeFailsWhenTheStoreCannotBeReadFirst() async {
        store.state.withLock { $0.failing = true }
        let hub = hub()
        await #expect(throws: RepositoryError.unavailable("down")) {
            _ = try await hub.subscribe(.chatts, after: nil, before: Self.far)
        }
    }
}

/// The log alone.
@Suite struct EventLogTests {
    static func entry(_ count: Int64?, _ size: Int = 10) -> EventLog.Entry {
        let bytes = [UInt8](repeating: UInt8(ascii: "x"), count: size)
        return EventLog.Entry(count: count, maps: bytes, chatts: bytes)
    }

    @Test func aResumeStartsAtTheFirstLaterChattAndOldHeartbeatsAreNotSentAgain() {
        var log = EventLog(capacity: 1_000, from: 0)
        for count: Int64? in [nil, nil, 1, nil, 2, nil] { log.append(Self.entry(count)) }
        #expect(log.serial(after: 0) == 2)
        #expect(log.serial(after: 1) == 4)
        #expect(log.serial(after: 2) == log.endSerial, "nothing later: the end, past the trailing heartbeat")
    }

    @Test func theOldestEntriesFallOffPastTheCapacityAndTheLogKnowsWhereItBeginsThen() {
        var log = EventLog(capacity: 25, from: 5)
        for count: Int64 in 6...9 { log.append(Self.entry(count)) }
        #expect(log.size <= 25 && log.firstSerial == 2 && log.coveredFrom == 7)
        #expect(log.serial(after: 6) == nil, "chatt 7 fell off: the store must be read")
        #expect(log.serial(after: 7) == 2)
        #expect(log.read(from: 1, .chatts, limit: 100) == nil, "a reader at a serial that fell off is cut")
        #expect(log.read(from: 2, .chatts, limit: 15)?.next == 3, "about the limit, one at least")
        log.restart(from: 0)
        #expect(log.size == 0 && log.firstSerial == 4 && log.serial(after: 0) == 4)
    }
}

/// Reads of the store that many callers ask for at once.
@Suite struct ChattStreamHubReadTests {
    @Test func callersThatComeWhileAReadRunsWaitForItAndAtMostOneMoreReadServesThemAll() async throws {
        let store = ChattStreamHubTests.Store()
        let gate = Locked<[CheckedContinuation<Void, Never>]>([])
        let inFlight = Locked((now: 0, most: 0))
        let hub = ChattStreamHub(read: { count, limit, deadline throws(RepositoryError) in
            inFlight.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            await withCheckedContinuation { continuation in gate.withLock { $0.append(continuation) } }
            inFlight.withLock { $0.now -= 1 }
            return try await store.read(count, limit, deadline)
        })
        let far = ContinuousClock.now + .seconds(3600)
        // Open the gate for each read as it comes, until the callers are done.
        let opener = Task {
            while !Task.isCancelled {
                for waiting in gate.withLock({ gate in defer { gate = [] }; return gate }) { waiting.resume() }
                await Task.yield()
            }
        }
        try await hub.catchUp(before: far)  // the first: where the store stands, and the log filled
        store.commit("new")
        store.state.withLock { $0.reads = 0 }
        async let first: Void = hub.catchUp(before: far)
        async let second: Void = hub.catchUp(before: far)
        async let third: Void = hub.catchUp(before: far)
        _ = try await (first, second, third)
        opener.cancel()
        #expect(inFlight.withLock { $0.most } == 1, "one read at a time")
        #expect(store.state.withLock { $0.reads } <= 2, "the callers that came while it ran share the next")
        #expect(hub.state.withLock { $0.position } == store.position)
    }
}
