import ChattModel
import Dispatch
import JSON
import Locking

/// One snapshot query and encoding in progress for a feed. Requests that find the cache stale while it
/// runs wait for its outcome instead of querying too (ChattFeedCache explains which may).
final class FeedRebuild: Sendable {
    /// The cache generation read before the snapshot query began: the result is at least that fresh.
    let generation: UInt64
    private let done = DispatchGroup()
    private let outcome = Locked<Result<EncodedFeed, RepositoryError>?>(nil)

    /// A rebuild in progress; `finish` must be called exactly once.
    init(generation: UInt64) {
        self.generation = generation
        done.enter()
    }

    /// Publishes the outcome and wakes every waiter.
    func finish(_ result: Result<EncodedFeed, RepositoryError>) {
        outcome.withLock { $0 = result }
        done.leave()
    }

    /// Blocks until `finish` was called, then returns its outcome.
    func wait() -> Result<EncodedFeed, RepositoryError> {
        done.wait()
        // Invariant: `done` is left only after `outcome` is set, so the fallback is never used.
        return outcome.withLock { $0 } ?? .failure(.failed("feed rebuild finished without an outcome"))
    }
}
