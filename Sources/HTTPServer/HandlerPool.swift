import Dispatch
import Foundation

/// A fixed set of threads for handler work that may block (on the database), fed from one bounded queue.
///
/// Dispatch's concurrent queues add threads only slowly while all of theirs are blocked, so requests behind a
/// slow database used to queue for many seconds before even reaching the pool's bounded wait (measured:
/// bench/RESULTS.md, "Handler threads"). Here every thread exists from the start, the queue has a cap, and a job
/// that waited longer than `maxWaitSeconds` is expired (answered "busy") instead of run.
final class HandlerPool: @unchecked Sendable {  // `jobs` and `stopped` are only touched while holding `condition`
    private struct Job {
        let enqueued: DispatchTime
        let run: @Sendable () -> Void
        let expire: @Sendable () -> Void
    }

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var stopped = false
    private let maxQueued: Int
    private let maxWaitSeconds: Double

    init(threadCount: Int, maxQueued: Int, maxWaitSeconds: Double) {
        self.maxQueued = maxQueued
        self.maxWaitSeconds = maxWaitSeconds
        for index in 0..<max(1, threadCount) {
            let thread = Thread { self.work() }
            thread.name = "chatterd.handler.\(index)"
            thread.start()
        }
    }

    /// Queues `run`; `expire` replaces it if the job waits too long. False (and nothing queued) when full.
    func submit(run: @escaping @Sendable () -> Void, expire: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped, jobs.count < maxQueued else { return false }
        jobs.append(Job(enqueued: .now(), run: run, expire: expire))
        condition.signal()
        return true
    }

    /// Lets the threads finish the queued jobs and exit.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        while let job = nextJob() {
            let waited = Double(DispatchTime.now().uptimeNanoseconds - job.enqueued.uptimeNanoseconds) / 1e9
            if waited > maxWaitSeconds { job.expire() } else { job.run() }
        }
    }

    private func nextJob() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while jobs.isEmpty && !stopped { condition.wait() }
        return jobs.isEmpty ? nil : jobs.removeFirst()
    }
}
