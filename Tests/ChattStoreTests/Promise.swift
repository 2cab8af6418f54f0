import Dispatch
import Locking

/// A value that comes once, from any thread or task; those who wait for it suspend, each for a while at most.
final class Promise<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [Int: CheckedContinuation<Value?, Never>] = [:]
        var lastWaiter = 0
    }

    private let state = Locked(State())

    /// Gives the value to every waiter, now and later; only the first call counts.
    func fulfil(_ value: Value) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value?, Never>] in
            guard case .none = state.value else { return [] }
            state.value = value
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// The value if it has come; never waits.
    var current: Value? {
        state.withLock { $0.value }
    }

    /// The value once it has come; nil if `limit` passes first.
    func value(within limit: Duration = .seconds(10)) async -> Value? {
        await withCheckedContinuation { continuation in
            let waiter = state.withLock { state -> Int? in
                guard case .none = state.value else { return nil }
                state.lastWaiter += 1
                state.waiters[state.lastWaiter] = continuation
                return state.lastWaiter
            }
            guard let waiter else { return continuation.resume(returning: current) }
            let milliseconds = Int(limit / .milliseconds(1))
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
                self.state.withLock { $0.waiters.removeValue(forKey: waiter) }?.resume(returning: nil)
            }
        }
    }
}
