import Dispatch
import ChattModel
import Locking

// TEMPORARY until the suspend branch lands: blocking callers, off the loop only.
extension PGConnectionPool {
    public func withConnection<T>(_ body: (PGConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        let granted = Locked<Result<PGConnection, StoreError>?>(nil)
        let told = DispatchSemaphore(value: 0)
        loop.queue.async {
            self.lease(before: .now + self.acquireTimeout) { outcome in
                granted.withLock { $0 = outcome }
                told.signal()
            }
        }
        told.wait()
        let connection = try granted.withLock { $0! }.get()
        defer { loop.queue.sync { release(connection) } }
        return try body(connection)
    }
}

extension DispatchTime {
    var instant: ContinuousClock.Instant {
        let now = DispatchTime.now().uptimeNanoseconds
        return uptimeNanoseconds >= now
            ? .now + .nanoseconds(uptimeNanoseconds - now) : .now - .nanoseconds(now - uptimeNanoseconds)
    }
}

extension InsertBatcher {
    func store(_ chatt: NewChatt) throws(StoreError) -> ChattBatch {
        let outcome = Locked<Result<ChattBatch, StoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        store(chatt) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    func insert(_ chatt: NewChatt) throws(StoreError) { _ = try store(chatt) }
}

extension PGConnectionPool {
    func withSession<T>(
        before deadline: DispatchTime, _ body: (PGSession) async throws(StoreError) -> T
    ) async throws(StoreError) -> T {
        try await withSession(before: deadline.instant, body)
    }
}
