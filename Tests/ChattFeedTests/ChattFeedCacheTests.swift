@testable import ChattFeed
import ChattModel
import TestSupport
import Foundation
import HTTPCore
import JSON
import Locking
import Testing

/// Runs `body(i)` for `0..<count`, each on its own thread (not Dispatch's pool, which adds threads only
/// slowly while its threads block), and returns a group to wait on.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> DispatchGroup {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    return group
}

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

/// Generations, trust, single flight and invalidation of the feed cache.
@Suite struct ChattFeedCacheTests {
    let repository = InMemoryChattRepository()
    let cache = ChattFeedCache()

    @Test func untrustedReadsAskTheVersionEveryTimeAndReReadOnlyWhenItChanged() async throws {
        try await repository.add(chatt(1))
        _ = try await cache.feed(.maps, from: repository)
        _ = try await cache.feed(.maps, from: repository)
        #expect(repository.versionReads == 2)
        #expect(repository.snapshotReads == 1)
        // A change nobody announced (another process, an operator) is still seen through the version.
        try await repository.add(chatt(2))
        #expect(messages(try await cache.feed(.maps, from: repository)) == ["message 1", "message 2"])
        #expect(repository.snapshotReads == 2)
        #expect(cache.currentFeed(.maps) == nil, "nothing is served without a check while untrusted")
    }

    @Test func trustedReadsTouchNoDatabaseUntilInvalidated() async throws {
        cache.setNotificationsTrusted(true)
        try await repository.add(chatt(1))
        let first = try await cache.feed(.maps, from: repository)
        let second = try await cache.feed(.maps, from: repository)
        #expect(first === second)
        #expect(cache.currentFeed(.maps) === first)
        #expect(repository.versionReads == 0 && repository.snapshotReads == 1)
        // Trusted means relying on invalidate(): an unannounced change is not looked for...
        try await repository.add(chatt(2))
        #expect(messages(try await cache.feed(.maps, from: repository)) == ["message 1"])
        // ...and an announced one is.
        cache.invalidate()
        #expect(cache.currentFeed(.maps) == nil)
        #expect(messages(try await cache.feed(.maps, from: repository)) == ["message 1", "message 2"])
        #expect(repository.versionReads == 0 && repository.snapshotReads == 2)
    }

    @Test func theTwoFeedsAreCachedSeparately() async throws {
        cache.setNotificationsTrusted(true)
        _ = try await cache.feed(.maps, from: repository)
        #expect(cache.currentFeed(.chatts) == nil)
        _ = try await cache.feed(.chatts, from: repository)
        _ = try await cache.feed(.maps, from: repository)
        #expect(repository.snapshotReads == 2)
    }

    @Test func everyChangeOfTrustInvalidates() async throws {
        let start = cache.generation
        cache.setNotificationsTrusted(true)
        _ = try await cache.feed(.maps, from: repository)
        #expect(cache.generation == start + 1 && cache.currentFeed(.maps) != nil)
        cache.setNotificationsTrusted(true)
        #expect(cache.generation == start + 1, "no change, no invalidation")
        cache.setNotificationsTrusted(false)
        cache.setNotificationsTrusted(true)
        #expect(cache.generation == start + 3)
        #expect(cache.currentFeed(.maps) == nil, "notifications may have been missed while untrusted")
    }

    @Test func anInvalidationDuringTheQueryLeavesItsResultStale() async throws {
        cache.setNotificationsTrusted(true)
        try await repository.add(chatt(1))
        let gate = repository.holdNextSnapshot()
        let leader = reading(.maps)
        await gate.waitUntilEntered()
        try await repository.add(chatt(2))
        cache.invalidate()
        gate.release()
        // The leader's caller arrived before the post, so the older rows are right for it...
        #expect(await leader.value.map(messages) == ["message 1"])
        // ...but they are stale from the moment of the invalidation, and never served again.
        #expect(cache.currentFeed(.maps) == nil)
        #expect(messages(try await cache.feed(.maps, from: repository)) == ["message 1", "message 2"])
        #expect(repository.snapshotReads == 2)
    }

    @Test func concurrentReadersOfAStaleFeedShareOneQuery() async throws {
        cache.setNotificationsTrusted(true)
        try await repository.add(chatt(1))
        let gate = repository.holdNextSnapshot()
        let leader = reading(.maps)
        await gate.waitUntilEntered()
        let followers = (0..<16).map { _ in reading(.maps) }
        // Give the followers time to find the rebuild in progress; whenever they arrive, one query must do.
        try await Task.sleep(for: .milliseconds(200))
        gate.release()
        let feeds = await feeds(of: [leader] + followers)
        #expect(feeds.count == 17)
        #expect(feeds.allSatisfy { $0 === feeds[0] })
        #expect(repository.snapshotReads == 1)
    }

    @Test func readersThatArriveAfterAnInvalidationWaitForANewerQuery() async throws {
        cache.setNotificationsTrusted(true)
        try await repository.add(chatt(1))
        let gate = repository.holdNextSnapshot()
        let leader = reading(.maps)
        await gate.waitUntilEntered()
        // A post lands and invalidates while the old query runs; its author then reads.
        try await repository.add(chatt(2))
        cache.invalidate()
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
        cache.setNotificationsTrusted(true)
        repository.fail(with: .unavailable("down"))
        await #expect(throws: RepositoryError.unavailable("down")) { try await cache.feed(.maps, from: repository) }
        #expect(cache.currentFeed(.maps) == nil)
        repository.fail(with: nil)
        #expect(messages(try await cache.feed(.maps, from: repository)) == [])
    }

    @Test func untrustedReadersShareAQueryForANewVersion() async throws {
        try await repository.add(chatt(1))
        _ = try await cache.feed(.chatts, from: repository)
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
    private func reading(_ kind: ChattFeedCache.Kind) -> Task<EncodedFeed?, Never> {
        Task { [cache, repository] in try? await cache.feed(kind, from: repository) }
    }

    /// The feeds `readers` were given, leaving out failures.
    private func feeds(of readers: [Task<EncodedFeed?, Never>]) async -> [EncodedFeed] {
        var feeds: [EncodedFeed] = []
        for reader in readers { if let feed = await reader.value { feeds.append(feed) } }
        return feeds
    }
}
