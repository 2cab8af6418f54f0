import ChattFeed
import ChattModel
import Dispatch
import Locking
import TaskExecution

extension ChattFeedCache {
    /// `feed(_:from:before:)` for tests that read from threads: blocks until the feed (or a failure) is there,
    /// waiting a minute at most.
    public func feed(_ kind: Kind, from repository: any ChattRepository) throws(RepositoryError) -> EncodedFeed {
        let outcome = Locked<Result<EncodedFeed, RepositoryError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        // Not on the cooperative pool, whose few threads the blocked callers (tests) may all be.
        Task(executorPreference: DispatchTaskExecutor.shared) {
            do throws(RepositoryError) {
                let feed = try await self.feed(kind, from: repository, before: .now() + 60)
                outcome.withLock { $0 = .success(feed) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
