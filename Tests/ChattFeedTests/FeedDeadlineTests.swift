@testable import ChattFeed
import ChattModel
import TestSupport
import Testing

/// A reader waits for another's read of the store only until its own deadline.
@Suite(.timeLimit(.minutes(1))) struct FeedDeadlineTests {
    @Test func aReaderWaitingForAnotherReadGivesUpAtItsOwnDeadlineAndTheReadGoesOn() async throws {
        let repository = InMemoryChattRepository()
        try await repository.add(NewChatt(name: "n", message: "1"))
        let feeds = ChattFeed(repository: repository)
        let gate = repository.holdNextSnapshot()
        let leader = Task { try? await feeds.read(.maps) }
        await gate.waitUntilEntered()
        var late: RepositoryError?
        do {
            _ = try await feeds.read(.maps, before: .now + .milliseconds(100))
        } catch {
            late = error
        }
        #expect(late == ChattFeed.outOfTime)
        gate.release()
        #expect(await leader.value?.rowCount == 1, "the held read finishes")
        #expect(repository.snapshotReads == 1)
    }
}
