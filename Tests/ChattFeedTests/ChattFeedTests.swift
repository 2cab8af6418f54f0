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

/// Generations, trust, single flight and invalidation of the feed feeds.
@Suite struct ChattFeedTests {
    let repository = InMemoryChattRepository()
    let feeds: ChattFeed

    init() {
        feeds = ChattFeed(repository: repository)
    }

    @Test func untrustedReadsAskTheVersionEveryTimeAndReReadOnlyWhenItChanged() async throws {
        try await repository.add(chatt(1))
        _ = try await feeds.read(.maps)
        _ = try await feeds.read(.maps)
        #expect(repository.versionReads == 2)
        #expect(repository.snapshotReads == 1)
        // A change nobody announced (another process, an operator) is still seen through the version.
        try await repository.add(chatt(2))
        #expect(messages(try await feeds.read(.maps)) == ["message 1", "message 2"])
        #expect(repository.snapshotReads == 2)
        #expect(feeds.currentFeed(.maps) == nil, "nothing is served without a check while untrusted")
    }

    @Test func trustedReadsTouchNoDatabaseUntilInvalidated() async throws {
        feeds.listening(true)
        try await repository.add(chatt(1))
        let first = try await feeds.read(.maps)
        let second = try await feeds.read(.maps)
        #expect(first === second)
        #expect(feeds.currentFeed(.maps) === first)
        #expect(repository.versionReads == 0 && repository.snapshotReads == 1)
        // Trusted means relying on invalidate(): an unannounced change is not looked for...
        try await repository.add(chatt(2))
        #expect(messages(try await feeds.read(.maps)) == ["message 1"])
        // ...and an announced one is.
        feeds.invalidate()
        #expect(feeds.currentFeed(.maps) == nil)
        #expect(messages(try await feeds.read(.maps)) == ["message 1", "message 2"])
        #expect(repository.versionReads == 0 && repository.snapshotReads == 2)
    }

    @Test func theTwoFeedsAreCachedSeparately() async throws {
        feeds.listening(true)
        _ = try await feeds.read(.maps)
        #expect(feeds.currentFeed(.chatts) == nil)
        _ = try await feeds.read(.chatts)
        _ = try await feeds.read(.maps)
        #expect(repository.snapshotReads == 2)
    }

    @Test func everyChangeOfTrustInvalidates() async throws {
        let start = feeds.generation
        feeds.listening(true)
        _ = try await feeds.read(.maps)
        #expect(feeds.generation == start + 1 && feeds.currentFeed(.maps) != nil)
        feeds.listening(true)
        #expect(feeds.generation == start + 1, "no change, no invalidation")
        feeds.listening(false)
        feeds.listening(true)
        #expect(feeds.generation == start + 3)
        #expect(feeds.currentFeed(.maps) == nil, "notifications may have been missed while untrusted")
    }

    @Test func anInvalidationDuringTheQueryLeavesItsResultStale() async throws {
        feeds.listening(true)
        try await repository.add(chatt(1))
        let gate = repository.holdNextSnapshot()
        let leader = reading(.maps)
        await gate.waitUntilEntered()
        try await repository.add(chatt(2))
        feeds.invalidate()
        gate.release()
        // The leader's caller arrived before the post, so the older rows are right for it...
        #expect(await leader.value.map(messages) == ["message 1"])
        // ...but they are stale from the moment of the invalidation, and never served again.
        #expect(feeds.currentFeed(.maps) == nil)
        #expect(messages(try await feeds.read(.maps)) == ["message 1", "message 2"])
        #expect(repository.snapshotReads == 2)
    }

    @Test func concurrentReadersOfAStaleFeedShareOneQuery() async throws {
        feeds.listening(true)
        try await repository.add(chatt(1))
        let gate = repository.holdNextSnapshot()
        let leader = reading(.maps)
        await gate.waitUntilEntered()
        let followers = (0..<16).map { _ in reading(.maps) }
        // Give the followers time to find the rebuild in progress; whenever they arrive, one query must do.
        try await Task.sleep(for: .milliseconds(200))
        gate.release()
        let served = await served(by: [leader] + followers)
        #expect(served.count == 17)
        #expect(served.allSatisfy { $0 === served[0] })
        #expect(repository.snapshotReads == 1)
    }

    @Test func readersThatArriveAfterAnInvalidationWaitForANewerQuery() async throws {
        feeds.listening(true)
        try await repository.add(chatt(1))
        let gate = repository.holdNextSnapshot()
        let leader = reading(.maps)
        await gate.waitUntilEntered()
        // A post lands and invalidates while the old query runs; its author then reads.
        try await repository.add(chatt(2))
        feeds.invalidate()
        let readers = (0..<8).map { _ in reading(.maps) }
        try await Task.sleep(for: .milliseconds(200))
        gate.release()
        _ = await leader.value
        var seen: [[String]] = []
        for reader in readers { seen.append(await reader.value.map(messages) ?? []) }
        #expect(seen == Array(repeating: ["message 1", "message 2"], count: 8))
        #expect(repository.snapshotReads == 2, "one newer query for all of them")
    }

    @Test func aFailedQueryFailsItsWaitersAndTheNextReadRetries() async throws {
        feeds.listening(true)
        repository.fail(with: .unavailable("down"))
        await #expect(throws: RepositoryError.unavailable("down")) { try await feeds.read(.maps) }
        #expect(feeds.currentFeed(.maps) == nil)
        repository.fail(with: nil)
        #expect(messages(try await feeds.read(.maps)) == [])
    }

    @Test func untrustedReadersShareAQueryForANewVersion() async throws {
        try await repository.add(chatt(1))
        _ = try await feeds.read(.chatts)
        try await repository.add(chatt(2))
        let gate = repository.holdNextSnapshot()
        let readers = (0..<8).map { _ in reading(.chatts) }
        await gate.waitUntilEntered()
        try await Task.sleep(for: .milliseconds(200))
        gate.release()
        var seen: [[String]] = []
        for reader in readers { seen.append(await reader.value.map(messages) ?? []) }
        #expect(seen == Array(repeating: ["message 1", "message 2"], count: 8))
        #expect(repository.snapshotReads == 2)
        #expect(repository.versionReads == 9)
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
