import ChattModel
import Logging

/// `--retention-days`: removes the chatts posted longer ago than that, in batches, each a removal like a
/// moderator's (an event of the change log, recorded as `retention`). A pass runs at start and every `interval`;
/// it goes on batch after batch while they come back full, pausing between them four times as long as the batch
/// took (at least `minimumPause`), so that posts meanwhile find the store free most of the time. Several processes
/// may run it: one batch at a time is under way across them (migrations/0007's `chatts_retain`).
struct Retention: Sendable {
    let repository: any ChattRepository
    let days: Int
    let batch: Int
    let interval: Duration
    let minimumPause: Duration
    let patience: Duration
    let logger: Logger
    /// Waits, between batches and passes (injected by tests).
    let sleep: @Sendable (Duration) async -> Void
    let now: @Sendable () -> ContinuousClock.Instant

    init(
        repository: any ChattRepository, days: Int, batch: Int = 1_000, interval: Duration = .seconds(60),
        minimumPause: Duration = .milliseconds(50), patience: Duration = .seconds(7), logger: Logger,
        sleep: @escaping @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) },
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.repository = repository
        self.days = days
        self.batch = batch
        self.interval = interval
        self.minimumPause = minimumPause
        self.patience = patience
        self.logger = logger
        self.sleep = sleep
        self.now = now
    }

    /// Runs a pass now and every `interval` until the task is cancelled.
    func start() -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                _ = await pass()
                await sleep(interval)
            }
        }
    }

    /// One pass: batches until one comes back less than full (or fails); how many chatts it removed.
    func pass() async -> Int {
        var removed = 0
        while !Task.isCancelled {
            let started = now()
            do throws(RepositoryError) {
                let count = try await repository.removeExpired(
                    olderThanDays: days, batch: batch, before: started + patience)
                removed += count
                guard count == batch else { break }
            } catch {
                logger.log(.warn, "retention_failed", ["cause": "\(error.detail)", "removed": .integer(removed)])
                break
            }
            await sleep(max(minimumPause, (now() - started) * 4))
        }
        if removed > 0 {
            logger.log(.info, "retention_removed", ["removed": .integer(removed), "older_than_days": .integer(days)])
        }
        return removed
    }
}
