import ChattModel
import Locking

/// `/readyz`'s database check, shared by everyone who asks: at most one round trip is in flight, those who ask
/// meanwhile wait for its outcome, and an outcome is reused for `freshness` seconds. So a flood of probes (the
/// route is public) costs the pool one connection a second at most, not one per probe.
final class ReadinessCheck: Sendable {
    typealias Outcome = Result<Void, RepositoryError>

    private struct State {
        /// The last outcome and when it came.
        var last: (outcome: Outcome, at: Double)?
        /// Those waiting for the check in flight; nil while none is.
        var waiting: [CheckedContinuation<Outcome, Never>]?
    }

    private let ping: @Sendable (ContinuousClock.Instant) async -> Outcome
    private let freshness: Double
    private let now: @Sendable () -> Double
    private let state = Locked(State())

    /// - Parameters:
    ///   - ping: one round trip to the database, given up at the deadline.
    ///   - freshness: seconds an outcome is reused.
    ///   - now: a monotonic clock in seconds (injected by tests).
    init(
        freshness: Double = 1, now: @escaping @Sendable () -> Double,
        ping: @escaping @Sendable (ContinuousClock.Instant) async -> Outcome
    ) {
        self.ping = ping
        self.freshness = freshness
        self.now = now
    }

    /// Callers waiting for the check in flight (for tests).
    var waitingCount: Int { state.withLock { $0.waiting?.count ?? 0 } }

    /// The database's readiness: a fresh outcome if there is one, else that of the check in flight, else of a new
    /// one that gives up at `deadline`.
    func outcome(before deadline: ContinuousClock.Instant) async -> Outcome {
        enum Role {
            case answered(Outcome)
            case follower
            case leader
        }
        let time = now()
        let role = state.withLock { state -> Role in
            if let last = state.last, time - last.at < freshness { return .answered(last.outcome) }
            if state.waiting != nil { return .follower }
            state.waiting = []
            return .leader
        }
        switch role {
        case .answered(let outcome):
            return outcome
        case .leader:
            let outcome = await ping(deadline)
            let waiting = state.withLock { state in
                state.last = (outcome, now())
                defer { state.waiting = nil }
                return state.waiting ?? []
            }
            for continuation in waiting { continuation.resume(returning: outcome) }
            return outcome
        case .follower:
            return await withCheckedContinuation { continuation in
                // The check may have ended since this caller looked: then its outcome is the answer.
                let ended = state.withLock { state -> Outcome? in
                    // Invariant: the leader records its outcome under the lock that ends the wait.
                    guard state.waiting != nil else { return state.last!.outcome }
                    state.waiting?.append(continuation)
                    return nil
                }
                if let ended { continuation.resume(returning: ended) }
            }
        }
    }
}
