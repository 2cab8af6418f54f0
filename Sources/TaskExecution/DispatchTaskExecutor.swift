import Dispatch

/// Runs tasks' jobs on a Dispatch queue instead of Swift's cooperative pool, so that a request's task shares the
/// process's threads with everything else on Dispatch, and never waits for a pool thread that a caller blocked.
public final class DispatchTaskExecutor: TaskExecutor {
    /// Request tasks run here: jobs never block, so Dispatch keeps about one thread per core busy with them.
    public static let shared = DispatchTaskExecutor(queue: .global())

    private let queue: DispatchQueue

    public init(queue: DispatchQueue) {
        self.queue = queue
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
