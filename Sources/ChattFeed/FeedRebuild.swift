import ChattModel
import Dispatch
import Locking
import TaskExecution

/// One read of the store and encoding in progress for a feed. Requests that find the cache stale while it runs
/// wait for its outcome instead of querying too (ChattFeedCache explains which may); they suspend meanwhile, and
/// each stops waiting at its own deadline.
final class FeedRebuild: Sendable {
    private struct State {
        var outcome: Result<EncodedFeed, RepositoryError>?
        var waiters: [Int: CheckedContinuation<Result<EncodedFeed, RepositoryError>, Never>] = [:]
        var lastWaiter = 0
    }

    /// The cache generation read before the store's read began: the result is at least that fresh.
    let generation: UInt64
    private let state = Locked(State())

    /// A rebuild in progress; `finish` must be called exactly once.
    init(generation: UInt64) {
        self.generation = generation
    }

    /// Publishes the outcome and resumes every waiter.
    func finish(_ result: Result<EncodedFeed, RepositoryError>) {
        let waiters = state.withLock { state in
            state.outcome = result
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// The outcome, once `finish` was called; `.unavailable` if `deadline` comes first.
    func outcome(before deadline: ContinuousClock.Instant) async -> Result<EncodedFeed, RepositoryError> {
        await withCheckedContinuation { continuation in
            let waiter = state.withLock { state -> Int? in
                guard case .none = state.outcome else { return nil }
                state.lastWaiter += 1
                state.waiters[state.lastWaiter] = continuation
                return state.lastWaiter
            }
            guard let waiter else {
                // Invariant: the outcome is set once no waiter can be added.
                return continuation.resume(returning: state.withLock { $0.outcome! })
            }
            // Weakly: a timer must not keep a finished rebuild's feed alive until the deadline.
            DispatchQueue.global().asyncAfter(deadline: DispatchTime(deadline)) { [weak self] in
                let expired = self?.state.withLock { $0.waiters.removeValue(forKey: waiter) }
                expired?.resume(returning: .failure(ChattFeedCache.outOfTime))
            }
        }
    }
}
