import ChangeLog
import ChattModel
import Locking
import Testing
import TestSupport

/// The change log following a store kept in memory: what its followers are told, in what order, and when it starts
/// over. Every read is awaited (`synced`), so nothing sleeps.
@Suite struct ChangeLogTests {
    /// Writes down every change it is told, in order.
    final class Recorder: LogFollower {
        let changes = Locked<[LogChange]>([])

        func follow(_ change: LogChange) async {
            changes.withLock { $0.append(change) }
        }

        /// What it was told, one word each, with the messages a stretch brought.
        var told: [String] {
            changes.withLock { changes in
                changes.map { change in
                    switch change {
                    case .restarted(let start):
                        "restarted \(start.recent.map { $0.ticks.chatts.map(\.chatt.message) } ?? [])"
                    case .advanced(let slice): "advanced \(slice.ticks.chatts.map(\.chatt.message))"
                    case .settled: "settled"
                    }
                }
            }
        }

        func forget() { changes.withLock { $0 = [] } }
    }

    let store = InMemoryChattRepository()
    let recorder = Recorder()
    static let far = ContinuousClock.now + .seconds(3600)

    func log(pageSize: Int = 100, backfillTicks: Int64 = 64) -> ChangeLog {
        let log = ChangeLog(repository: store, pageSize: pageSize, backfillTicks: backfillTicks)
        log.follow(with: recorder)
        return log
    }

    func post(_ message: String) async throws {
        try await store.add(NewChatt(name: "n", message: message))
    }

    /// Commits `message` as another writer would: nobody is told, and the next read's tick takes it.
    func commitElsewhere(_ message: String) {
        store.storeCommitted(
            NewChatt(name: "n", message: message), timestamp: "2026-03-25T08:12:00.\(100_000 + store.chatts.count)Z")
    }

    @Test func theFirstReadStartsTheLogWithItsRecentTicksAndLaterReadsTellOnlyWhatIsNew() async throws {
        let log = log()
        commitElsewhere("a")
        commitElsewhere("b")
        let start = try await log.synced(before: Self.far)
        #expect(recorder.told == ["restarted [\"a\", \"b\"]", "settled"])
        #expect(start == store.newestTick.position() && log.position == start)
        recorder.forget()
        try await post("c")
        _ = try await log.caughtUp(before: Self.far)
        #expect(recorder.told == ["advanced [\"c\"]", "settled"])
        recorder.forget()
        _ = try await log.synced(before: Self.far)
        #expect(recorder.told == ["settled"], "nothing new: nothing but the end of the read")
    }

    @Test func aStretchLongerThanAPageIsToldPageByPageAndEndsWhereTheStoreStands() async throws {
        let log = log(pageSize: 3)
        _ = try await log.synced(before: Self.far)
        recorder.forget()
        for serial in 1...7 { commitElsewhere("\(serial)") }
        let end = try await log.synced(before: Self.far)
        let told = recorder.told
        #expect(told.count > 2 && told.last == "settled")
        let slices = recorder.changes.withLock { $0 }.compactMap { change -> LogSlice? in
            if case .advanced(let slice) = change { return slice } else { return nil }
        }
        let messages: [String] = slices.flatMap { $0.ticks.chatts.map(\.chatt.message) }
        #expect(messages == ["1", "2", "3", "4", "5", "6", "7"])
        for (before, after) in zip(slices, slices.dropFirst()) { #expect(before.end == after.start, "no gap") }
        #expect(slices.last?.end == end && end == store.newestTick.position())
    }

    @Test func aFlightThatBringsABigStretchSaysSoOnceItsFollowersHaveItAndASmallOneDoesNot() async throws {
        let ended = Locked<[Int]>([])
        let recorder = recorder
        let bigReadEnded: @Sendable () -> Void = {
            let told = recorder.changes.withLock { $0.count }
            ended.withLock { $0.append(told) }
        }
        let log = ChangeLog(repository: store, pageSize: 4, bigRead: 10, bigReadEnded: bigReadEnded)
        log.follow(with: recorder)
        _ = try await log.synced(before: Self.far)
        for index in 0..<9 { commitElsewhere("small \(index)") }
        _ = try await log.synced(before: Self.far)
        #expect(ended.withLock { $0 }.isEmpty)
        for index in 0..<10 { commitElsewhere("big \(index)") }
        _ = try await log.synced(before: Self.far)
        #expect(ended.withLock { $0 } == [recorder.changes.withLock { $0.count }], "once, after the last change")
    }

    /// A follower with someone waiting on it for every change: a stream hub with subscribers.
    final class LiveFollower: LogFollower {
        func follow(_ change: LogChange) async {}
        var followsLive: Bool { true }
    }

    /// Another process commits `message` and ticks: its announcement is what comes next.
    func tickedElsewhere(_ message: String) async throws {
        commitElsewhere(message)
        _ = try await store.tick(before: Self.far)
    }

    /// Waits until a flight asked for without a waiter has moved the log.
    func waitForAMove(from position: LogPosition?, of log: ChangeLog) async {
        while log.position == position { await Task.yield() }
    }

    @Test func anIdleProcessNotesAnnouncedTicksForItsNextReaderAndReadsThemAtOnceWhenInUse() async throws {
        let clock = Locked(ContinuousClock.now)
        let log = ChangeLog(repository: store, idleAfter: .seconds(1), now: { clock.withLock { $0 } })
        log.follow(with: recorder)
        _ = try await log.synced(before: Self.far)
        clock.withLock { $0 += .seconds(2) }
        try await tickedElsewhere("a")
        let reads = store.logReads
        recorder.forget()
        log.ticked()
        #expect(store.logReads == reads && recorder.told.isEmpty, "idle: noted, not read")
        #expect(!log.isCaughtUp, "a reader is not served what the note stands for")
        _ = try await log.caughtUp(before: Self.far)
        #expect(recorder.told == ["advanced [\"a\"]", "settled"] && log.isCaughtUp)
        // Asked within the last second: in use, so the next announcement is read at once.
        try await tickedElsewhere("b")
        var position = log.position
        log.ticked()
        await waitForAMove(from: position, of: log)
        #expect(recorder.told.suffix(2) == ["advanced [\"b\"]", "settled"])
        // Idle again, but someone follows live: read at once too.
        log.follow(with: LiveFollower())
        clock.withLock { $0 += .seconds(2) }
        try await tickedElsewhere("c")
        position = log.position
        log.ticked()
        await waitForAMove(from: position, of: log)
        #expect(recorder.told.suffix(2) == ["advanced [\"c\"]", "settled"])
    }

    @Test func aLongStretchNobodyFollowsLiveStartsTheLogOverAtTheNewestTickOneFollowedLiveIsReadWhole() async throws {
        let log = ChangeLog(repository: store, pageSize: 4, bigRead: 10)
        log.follow(with: recorder)
        _ = try await log.synced(before: Self.far)
        recorder.forget()
        for index in 0..<20 { commitElsewhere("m\(index)") }
        let end = try await log.synced(before: Self.far)
        #expect(recorder.told.filter { $0.hasPrefix("advanced") }.count == 3, "three pages, twelve events")
        #expect(recorder.told.suffix(2).first?.hasPrefix("restarted") == true && recorder.told.last == "settled")
        #expect(end == store.newestTick.position() && log.starts == 2)
        log.follow(with: LiveFollower())
        recorder.forget()
        for index in 0..<20 { commitElsewhere("n\(index)") }
        _ = try await log.synced(before: Self.far)
        let told = recorder.changes.withLock { changes in
            changes.flatMap { change -> [String] in
                guard case .advanced(let slice) = change else { return [] }
                return slice.ticks.chatts.map(\.chatt.message)
            }
        }
        #expect(told == (0..<20).map { "n\($0)" } && !recorder.told.contains { $0.hasPrefix("restarted") })
    }

    @Test func anEditStartsTheLogOverAtTheTickThatSawIt() async throws {
        let log = log()
        commitElsewhere("a")
        _ = try await log.synced(before: Self.far)
        recorder.forget()
        store.edit()
        let start = try await log.synced(before: Self.far)
        guard case .restarted(let restart)? = recorder.changes.withLock({ $0.first }) else {
            Issue.record("expected a start, got \(recorder.told)")
            return
        }
        #expect(restart.position == start && restart.epoch == 2 && restart.recent == nil, "no chatts of another epoch")
    }

    @Test func aStoreThatWentBackStartsTheLogOverInsteadOfSkipping() async throws {
        let log = log()
        commitElsewhere("a")
        _ = try await log.synced(before: Self.far)
        commitElsewhere("b")
        _ = try await log.synced(before: Self.far)
        let before = try #require(log.position)
        store.restore(toTick: before.tick - 1)
        recorder.forget()
        try await post("c")
        let after = try await log.synced(before: Self.far)
        #expect(recorder.told.first?.hasPrefix("restarted") == true, "\(recorder.told)")
        #expect(after.tick == before.tick && after.token != before.token, "the number again, under another token")
    }

    @Test func aFollowerAddedLateIsToldWhereTheLogStandsBeforeAnythingElse() async throws {
        let log = log()
        commitElsewhere("a")
        _ = try await log.synced(before: Self.far)
        let late = Recorder()
        log.follow(with: late)
        try await post("b")
        _ = try await log.caughtUp(before: Self.far)
        #expect(late.told == ["restarted [\"a\"]", "advanced [\"b\"]", "settled"])
    }

    @Test func aFailedReadIsAnsweredAndTheNextReaderAsksAgain() async throws {
        let log = log()
        store.fail(with: .unavailable("down"))
        await #expect(throws: RepositoryError.unavailable("down")) { try await log.caughtUp(before: Self.far) }
        #expect(recorder.told.isEmpty)
        store.fail(with: nil)
        _ = try await log.caughtUp(before: Self.far)
        #expect(recorder.told.first?.hasPrefix("restarted") == true)
    }

    @Test func flightsStartNoCloserThanTheSpacing() async throws {
        let spacing = Duration.milliseconds(40)
        let log = ChangeLog(repository: store, spacing: spacing)
        log.follow(with: recorder)
        let started = ContinuousClock.now
        for name in ["a", "b", "c"] {
            try await store.add(NewChatt(name: name, message: name, geodata: nil))
            _ = try await log.caughtUp(before: Self.far)
        }
        // A lower bound only: a sleep never ends early, so this cannot fail by the machine being slow.
        #expect(ContinuousClock.now - started >= spacing * 2, "three flights, each after the last by the spacing")
        #expect(recorder.told.filter { $0.hasPrefix("advanced") } == ["advanced [\"b\"]", "advanced [\"c\"]"])
    }

    @Test func aReaderWhoseDeadlinePassesIsAnsweredOutOfTime() async throws {
        // The flight is held by its follower, so it cannot land before the reader waits (a flight that has landed
        // is answered whatever the deadline: on a loaded machine it did).
        let held = HeldFollower()
        let log = ChangeLog(repository: store)
        log.follow(with: held)
        await #expect(throws: ChangeLog.outOfTime) { try await log.synced(before: .now - .seconds(1)) }
        held.release()
    }

    /// Holds every change it is told until released.
    final class HeldFollower: LogFollower {
        private let gate = Gate()

        func follow(_ change: LogChange) async {
            await gate.wait()
        }

        func release() {
            gate.open()
        }
    }
}
