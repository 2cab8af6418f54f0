@testable import ChattFeed
import ChattModel
import TestSupport
import Foundation
import HTTPCore
import JSON
import Locking
import Testing


private func chatt(_ serial: Int) -> NewChatt {
    NewChatt(name: "user\(serial)", message: "message \(serial)")
}

private func messages(_ feed: EncodedFeed) -> [String] {
    let rows = (try? JSONParser.parse(feed.identity.body.bytes)) ?? .null
    guard case .array(let items) = rows else { return [] }
    return items.compactMap { row in
        guard case .array(let fields) = row, fields.count > 1, case .string(let message) = fields[1] else { return nil }
        return message
    }
}

/// The feeds following the change log of a store kept in memory: trust, reads that wait for the log, full reads
/// shared by the readers that need them, and appends.
@Suite struct ChattFeedTests {
    let repository = InMemoryChattRepository()
    let feeds: ChattFeed

    init() {
        feeds = ChattFeed(repository: repository)
    }

    /// Commits `chatt` as another writer would: nobody is told.
    private func commitElsewhere(_ serial: Int) {
        repository.storeCommitted(chatt(serial), timestamp: "2026-03-25T08:11:59.\(200_000 + serial)Z")
    }

    @Test func untrustedReadsTickEveryTimeAndReadInFullOnlyOnce() async throws {
        try await repository.add(chatt(1))
        _ = try await feeds.read(.maps)
        let ticks = repository.tickCalls
        _ = try await feeds.read(.maps)
        #expect(repository.tickCalls == ticks + 1, "a read that trusts no notice has the store ticked")
        // A change nobody announced (another process, an operator) is still seen, and appended.
        commitElsewhere(2)
        #expect(messages(try await feeds.read(.maps)) == ["message 1", "message 2"])
        #expect(repository.fullReads == 1)
        #expect(feeds.readyAnswer(.maps, { $0 }) == nil, "nothing is served without a tick while untrusted")
    }

    @Test func trustedReadsTouchNoDatabaseOnceTheLogIsCaughtUp() async throws {
        feeds.listening(true)
        try await repository.add(chatt(1))
        let first = try await feeds.read(.maps)
        let ticks = repository.tickCalls
        let second = try await feeds.read(.maps)
        #expect(first === second)
        #expect(feeds.readyAnswer(.maps, { $0 }) === first)
        #expect(repository.tickCalls == ticks && repository.fullReads == 1)
        // Trusted means relying on notices: an unannounced change is not looked for...
        commitElsewhere(2)
        #expect(messages(try await feeds.read(.maps)) == ["message 1"])
        // ...and an announced one is, and appended.
        try await feeds.log.noticedAndRead()
        #expect(messages(try await feeds.read(.maps)) == ["message 1", "message 2"])
        #expect(repository.fullReads == 1)
    }

    @Test func aReaderAfterAPostOfThisProcessSeesItWithoutANotice() async throws {
        feeds.listening(true)
        _ = try await feeds.read(.chatts)
        try await repository.add(chatt(1))
        #expect(messages(try await feeds.read(.chatts)) == ["message 1"])
    }

    @Test func eachFeedIsReadInFullWhenFirstAskedForAndBothFollowTheLogAfter() async throws {
        feeds.listening(true)
        try await repository.add(chatt(1))
        _ = try await feeds.read(.maps)
        #expect(feeds.readyAnswer(.chatts, { $0 }) == nil)
        _ = try await feeds.read(.chatts)
        _ = try await feeds.read(.maps)
        #expect(repository.fullReads == 2)
        try await repository.add(chatt(2))
        let maps = try await feeds.read(.maps)
        let chatts = try await feeds.read(.chatts)
        #expect(messages(maps) == ["message 1", "message 2"] && messages(chatts) == messages(maps))
        #expect(maps.position == chatts.position && repository.fullReads == 2)
    }

    /// Posts `chatt(serial)` and waits until the log has told `feeds` of it.
    private func post(_ serial: Int, to feeds: ChattFeed) async throws {
        try await repository.add(chatt(serial))
        _ = try await feeds.log.caughtUp(before: .untilTheTestFails)
    }

    @Test func stretchesOfTheLogNobodyReadIsAppendedByTheNextReadInOrder() async throws {
        feeds.listening(true)
        try await repository.add(chatt(1))
        _ = try await feeds.read(.maps)
        try await post(2, to: feeds)
        #expect(feeds.state.withLock { $0.deferred.isEmpty }, "a version a reader took: the next stretch is appended")
        try await post(3, to: feeds)
        try await post(4, to: feeds)
        #expect(feeds.state.withLock { $0.deferredChatts } == 2, "nobody read the version with chatt 2")
        #expect(feeds.readyAnswer(.maps, { $0 }) == nil, "a version behind the log is not served")
        let feed = try await feeds.read(.maps)
        #expect(messages(feed) == (1...4).map { "message \($0)" })
        #expect(feeds.state.withLock { $0.deferred.isEmpty } && repository.fullReads == 1)
        let fresh = try await ChattFeed(repository: repository).read(.maps)
        #expect(feed.identity.body.bytes == fresh.identity.body.bytes, "the same bytes as a full read")
        #expect(feeds.readyAnswer(.maps, { $0 }) === feed)
    }

    @Test func pastTheLimitOfChattsKeptTheVersionsGoAndTheNextReadIsAFullRead() async throws {
        let feeds = ChattFeed(repository: repository, deferredChattsLimit: 2)
        feeds.listening(true)
        try await repository.add(chatt(1))
        _ = try await feeds.read(.chatts)
        for serial in 2...5 { try await post(serial, to: feeds) }
        #expect(feeds.state.withLock { $0.feeds.isEmpty && $0.deferred.isEmpty })
        #expect(messages(try await feeds.read(.chatts)) == (1...5).map { "message \($0)" })
        #expect(repository.fullReads == 2)
    }

    @Test func anEditReadsEveryFeedHeldInFullAgain() async throws {
        feeds.listening(true)
        try await repository.add(chatt(1))
        _ = try await feeds.read(.maps)
        _ = try await feeds.read(.chatts)
        repository.edit()
        commitElsewhere(2)
        try await feeds.log.noticedAndRead()
        #expect(messages(try await feeds.read(.chatts)) == ["message 1", "message 2"])
        #expect(repository.fullReads == 3, "one read for both feeds")
    }

    @Test func aChattThatSortsAmongTheSettledRowsIsPlacedByAFullRead() async throws {
        feeds.listening(true)
        for serial in 1...20 { try await repository.add(chatt(serial)) }
        _ = try await feeds.read(.maps)
        // Began before all of them, committed after: another process's long transaction.
        repository.storeCommitted(chatt(0), timestamp: "2026-03-25T08:11:59.000000Z")
        try await feeds.log.noticedAndRead()
        let feed = try await feeds.read(.maps)
        #expect(messages(feed) == (0...20).map { "message \($0)" })
        #expect(repository.fullReads == 2)
    }

    @Test func readersOfAFeedNotReadYetShareOneFullRead() async throws {
        feeds.listening(true)
        try await repository.add(chatt(1))
        let gate = repository.holdNextFullRead()
        let first = reading(.maps)
        await gate.waitUntilEntered()
        // Whenever the others come, before or after the read ends, it is the only one.
        let others = (0..<16).map { _ in reading(.maps) }
        gate.release()
        let served = await served(by: [first] + others)
        #expect(served.count == 17)
        #expect(served.allSatisfy { $0 === served[0] })
        #expect(repository.fullReads == 1)
    }

    @Test func aFailedReadFailsItsReadersAndTheNextReadTriesAgain() async throws {
        feeds.listening(true)
        repository.fail(with: .unavailable("down"))
        await #expect(throws: RepositoryError.unavailable("down")) { try await feeds.read(.maps) }
        #expect(feeds.readyAnswer(.maps, { $0 }) == nil)
        repository.fail(with: nil)
        #expect(messages(try await feeds.read(.maps)) == [])
    }

    /// A reader of `kind` in a task of its own: the feed it was given, or nil when it failed.
    private func reading(_ kind: ChattFeed.Kind) -> Task<EncodedFeed?, Never> {
        Task { [feeds] in try? await feeds.read(kind) }
    }

    /// The feeds `readers` were given, leaving out failures.
    private func served(by readers: [Task<EncodedFeed?, Never>]) async -> [EncodedFeed] {
        var served: [EncodedFeed] = []
        for reader in readers { if let feed = await reader.value { served.append(feed) } }
        return served
    }
}
