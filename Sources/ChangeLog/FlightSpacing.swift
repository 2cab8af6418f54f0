import Locking

/// Keeps the change log's flights at least `interval` apart, start to start. Under a steady stream of posts every
/// flight would tick and read at once after the last, a few hundred times a second in each process; spaced, one
/// tick takes in more batches, and the store and every process do that much less work per chatt
/// (bench/RESULTS.md, "Change log by snapshot ticks"). A flight asked for after a quiet spell starts at once.
final class FlightSpacing: Sendable {
    private let interval: Duration
    /// When the last flight started. Flights never overlap, so only one caller waits here at a time.
    private let lastStart = Locked<ContinuousClock.Instant?>(nil)

    init(_ interval: Duration) {
        self.interval = interval
    }

    /// Returns once the next flight may start: `interval` after the last one started, or now.
    func waitForTurn() async {
        guard interval > .zero else { return }
        if let last = lastStart.withLock({ $0 }), last + interval > .now {
            try? await Task.sleep(until: last + interval, clock: .continuous)
        }
        lastStart.withLock { $0 = .now }
    }
}
