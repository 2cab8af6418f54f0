import ChattFeed
import ChattModel
import Dispatch
import Locking
import TaskExecution

extension ChattFeed {
    /// `answer(_:before:)`'s feed for tests that read from threads: blocks until the feed (or a failure) is there,
    /// waiting a minute at most.
    public func read(_ kind: Kind) throws(RepositoryError) -> EncodedFeed {
        let outcome = Locked<Result<EncodedFeed, RepositoryError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        // Not on the cooperative pool, whose few threads the blocked callers (tests) may all be.
        Task(executorPreference: DispatchTaskExecutor.shared) {
            do throws(RepositoryError) {
                let answer = try await self.answer(kind, before: .now + .seconds(60))
                outcome.withLock { $0 = .success(answer.feed) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
