import ChangeLog
@testable import ChattFeed
import ChattModel
import TestSupport
import Testing

/// A reader waits for the store, read by the change log for everyone, only until its own deadline.
@Suite(.timeLimit(.minutes(1))) struct FeedDeadlineTests {
    @Test func aReaderWaitingForAnotherReadGivesUpAtItsOwnDeadlineAndTheReadGoesOn() async throws {
        let repository = InMemoryChattRepository()
        try await repository.add(NewChatt(name: "n", message: "1"))
        let feeds = ChattFeed(repository: repository)
        let gate = repository.holdNextFullRead()
        let leader = Task { try? await feeds.read(.maps) }
        await gate.waitUntilEntered()
        var late: RepositoryError?
        do {
            _ = try await feeds.read(.maps, before: .now + .milliseconds(100))
        } catch {
            late = error
        }
        #expect(late == ChangeLog.outOfTime)
        gate.release()
        #expect(await leader.value?.rowCount == 1, "the held read finishes")
        #expect(repository.fullReads == 1)
    }
}
