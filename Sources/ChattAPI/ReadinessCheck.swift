import ChattModel
import TaskExecution

/// `/readyz`'s database check, shared by everyone who asks: at most one round trip is in flight, those who ask
/// meanwhile wait for its outcome, and an outcome is reused for `freshness`. So a flood of probes (the route is
/// public) costs the pool one connection a second at most, not one per probe.
final class ReadinessCheck: Sendable {
    typealias Outcome = Result<Void, RepositoryError>

    private let freshness: Duration
    private let flights: SingleFlight<Outcome>

    /// - Parameters:
    ///   - freshness: how long an outcome is reused.
    ///   - now: the clock outcomes age by (injected by tests).
    ///   - ping: one round trip to the database, given up at the deadline.
    init(
        freshness: Duration = .seconds(1), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        patience: Duration = .seconds(5), ping: @escaping @Sendable (ContinuousClock.Instant) async -> Outcome
    ) {
        self.freshness = freshness
        flights = SingleFlight(now: now) { await ping(now() + patience) }
    }

    /// Callers waiting for the check in flight (for tests).
    var waitingCount: Int { flights.waiterCount }

    /// The database's readiness: a fresh outcome if there is one, else that of the check in flight, else of a new
    /// one; `.unavailable` when none comes by `deadline`.
    func outcome(before deadline: ContinuousClock.Instant) async -> Outcome {
        if let fresh = flights.landed(within: freshness) { return fresh }
        return await flights.value(of: flights.current(), before: deadline)
            ?? .failure(.unavailable("readiness: no answer from the database in time"))
    }
}
