/// When the pool may try to open a connection again after failures: 0.1 s, doubling, capped at 5 s.
///
/// While the database is failing only one caller at a time probes it; everyone else fails fast instead of
/// queueing behind a connect that may take the full connect timeout.
struct ConnectBackoff: Sendable {
    /// The wait after the first failure.
    static let initialDelay: Duration = .milliseconds(100)
    /// The longest wait between attempts.
    static let maximumDelay: Duration = .seconds(5)

    /// No attempt may start before this instant; nil while the database is healthy.
    private(set) var retryAt: ContinuousClock.Instant?
    private var delay: Duration = Self.initialDelay

    /// Whether a connect may start at `now`; claims the single probe while failing.
    mutating func startAttempt(at now: ContinuousClock.Instant) -> Bool {
        guard let retryAt else { return true }
        guard now >= retryAt else { return false }
        self.retryAt = now + delay
        return true
    }

    /// Records a failed connect that ended at `now`, and lengthens the next wait.
    mutating func recordFailure(at now: ContinuousClock.Instant) {
        retryAt = now + delay
        delay = min(delay * 2, Self.maximumDelay)
    }

    /// Records a successful connect: the database is healthy again.
    mutating func recordSuccess() {
        retryAt = nil
        delay = Self.initialDelay
    }
}
