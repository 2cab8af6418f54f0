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

/// Generations, trust, single flight and invalidation of the feed feeds.
@Suite struct ChattFeedTests {
    let repository = InMemoryChattRepository()
    let feeds: ChattFeed

    init() {
        feeds = ChattFeed(repository: repository)
    }

    @Test func untrustedReadsAskTheVersionEveryTimeAndReReadOnlyWhenItChanged() throws {
        try repository.add(chatt(1))
        _ = try feeds.read(.maps)
        _ = try feeds.read(.maps)
        #expect(repository.versionReads == 2)
        #expect(repository.snapshotReads == 1)
        // A change nobody announced (another process, an operator) is still seen through the version.
        try repository.add(chatt(2))
        #expect(messages(try feeds.read(.maps)) == ["message 1", "message 2"])
        #expect(repository.snapshotReads == 2)
        #expect(feeds.currentFeed(.maps) == nil, "nothing is served without a check while untrusted")
    }

    @Test func trustedReadsTouchNoDatabaseUntilInvalidated() throws {
        feeds.listening(true)
        try repository.add(chatt(1))
        let first = try feeds.read(.maps)
        let second = try feeds.read(.maps)
        #expect(first === second)
        #expect(feeds.currentFeed(.maps) === first)
        #expect(repository.versionReads == 0 && repository.snapshotReads == 1)
        // Trusted means relying on invalidate(): an unannounced change is not looked for...
        try repository.add(chatt(2))
        #expect(messages(try feeds.read(.maps)) == ["message 1"])
        // ...and an announced one is.
        feeds.invalidate()
        #expect(feeds.currentFeed(.maps) == nil)
        #expect(messages(try feeds.read(.maps)) == ["message 1", "message 2"])
        #expect(repository.versionReads == 0 && repository.snapshotReads == 2)
    }

    @Test func theTwoFeedsAreCachedSeparately() throws {
        feeds.listening(true)
        _ = try feeds.read(.maps)
        #expect(feeds.currentFeed(.chatts) == nil)
        _ = try feeds.read(.chatts)
        _ = try feeds.read(.maps)
        #expect(repository.snapshotReads == 2)
    }

    @Test func everyChangeOfTrustInvalidates() throws {
        let start = feeds.generation
        feeds.listening(true)
        _ = try feeds.read(.maps)
        #expect(feeds.generation == start + 1 && feeds.currentFeed(.maps) != nil)
        feeds.listening(true)
        #expect(feeds.generation == start + 1, "no change, no invalidation")
        feeds.listening(false)
        feeds.listening(true)
        #expect(feeds.generation == start + 3)
        #expect(feeds.currentFeed(.maps) == nil, "notifications may have been missed while untrusted")
    }

    @Test func anInvalidationDuringTheQueryLeavesItsResultStale() throws {
        feeds.listening(true)
        try repository.add(chatt(1))
        let gate = repository.holdNextSnapshot()
        let leader = Locked<EncodedFeed?>(nil)
        let done = onThreads(1) { _ in leader.withLock { $0 = try? self.feeds.read(.maps) } }
        gate.waitUntilEntered()
        try repository.add(chatt(2))
        feeds.invalidate()
        gate.release()
        done.wait()
        // The leader's caller arrived before the post, so the older rows are right for it...
        #expect(leader.withLock { $0 }.map(messages) == ["message 1"])
        // ...but they are stale from the moment of the invalidation, and never served again.
        #expect(feeds.currentFeed(.maps) == nil)
        #expect(messages(try feeds.read(.maps)) == ["message 1", "message 2"])
        #expect(repository.snapshotReads == 2)
    }

    @Test func concurrentReadersOfAStaleFeedShareOneQuery() throws {
        feeds.listening(true)
        try repository.add(chatt(1))
        let gate = repository.holdNextSnapshot()
        let results = Locked<[EncodedFeed]>([])
        let leader = onThreads(1) { _ in
            if let feed = try? self.feeds.read(.maps) { results.withLock { $0.append(feed) } }
        }
        gate.waitUntilEntered()
        let followers = onThreads(16) { _ in
            if let feed = try? self.feeds.read(.maps) { results.withLock { $0.append(feed) } }
        }
        // Give the followers time to find the rebuild in progress; whenever they arrive, one query must do.
        usleep(200_000)
        gate.release()
        leader.wait()
        followers.wait()
        let served = results.withLock { $0 }
        #expect(served.count == 17)
        #expect(served.allSatisfy { $0 === served[0] })
        #expect(repository.snapshotReads == 1)
    }

    @Test func readersThatArriveAfterAnInvalidationWaitForANewerQuery() throws {
        feeds.listening(true)
        try repository.add(chatt(1))
        let gate = repository.holdNextSnapshot()
        let leader = onThreads(1) { _ in _ = try? self.feeds.read(.maps) }
        gate.waitUntilEntered()
        // A post lands and invalidates while the old query runs; its author then reads.
        try repository.add(chatt(2))
        feeds.invalidate()
        let seen = Locked<[[String]]>([])
        let readers = onThreads(8) { _ in
            let feed = try? self.feeds.read(.maps)
            seen.withLock { $0.append(feed.map(messages) ?? []) }
        }
        usleep(200_000)
        gate.release()
        leader.wait()
        readers.wait()
        #expect(seen.withLock { $0 } == Array(repeating: ["message 1", "message 2"], count: 8))
        #expect(repository.snapshotReads == 2, "one newer query for all of them")
    }

    @Test func aFailedQueryFailsItsWaitersAndTheNextReadRetries() throws {
        feeds.listening(true)
        repository.fail(with: .unavailable("down"))
        #expect(throws: RepositoryError.unavailable("down")) { try feeds.read(.maps) }
        #expect(feeds.currentFeed(.maps) == nil)
        repository.fail(with: nil)
        #expect(messages(try feeds.read(.maps)) == [])
    }

    @Test func untrustedReadersShareAQueryForANewVersion() throws {
        try repository.add(chatt(1))
        _ = try feeds.read(.chatts)
        try repository.add(chatt(2))
        let gate = repository.holdNextSnapshot()
        let seen = Locked<[[String]]>([])
        let readers = onThreads(8) { _ in
            let feed = try? self.feeds.read(.chatts)
            seen.withLock { $0.append(feed.map(messages) ?? []) }
        }
        gate.waitUntilEntered()
        usleep(200_000)
        gate.release()
        readers.wait()
        #expect(seen.withLock { $0 } == Array(repeating: ["message 1", "message 2"], count: 8))
        #expect(repository.snapshotReads == 2)
        #expect(repository.versionReads == 9)
    }
}
