@testable import ChattFeed
import ChattModel
import TestSupport
import Testing

/// A reader waits for another's read of the store only until its own deadline.
@Suite(.timeLimit(.minutes(1))) struct FeedDeadlineTests {
    @Test func aReaderWaitingForAnotherReadGivesUpAtItsOwnDeadlineAndTheReadGoesOn() async throws {
        let repository = InMemoryChattRepository()
        try await repository.add(NewChatt(name: "n", message: "1"))
        let cache = ChattFeedCache()
        let gate = repository.holdNextSnapshot()
        let leader = Task { try? await cache.feed(.maps, from: repository) }
        await gate.waitUntilEntered()
        var late: RepositoryError?
        do {
            _ = try await cache.feed(.maps, from: repository, before: .now + .milliseconds(100))
        } catch {
            late = error
        }
        #expect(late == ChattFeedCache.outOfTime)
        gate.release()
        #expect(await leader.value?.rowCount == 1, "the held read finishes")
        #expect(repository.snapshotReads == 1)
    }
}
