import Locking

/// A value made at most once, on first demand, then shared. Callers that may wait get it (the first one
/// makes it while the others suspend until that one has: a single flight); callers that must not wait, such as
/// an I/O queue, only see it once it exists.
final class Lazy<Value: Sendable>: Sendable {
    fileprivate enum Phase: Sendable {
        case empty
        /// Being made; each waiter is told the value once it is ready.
        case making([@Sendable (Value) -> Void])
        case ready(Value)
    }

    private let phase: Locked<Phase>

    /// Nothing made yet.
    init() {
        phase = Locked(.empty)
    }

    /// The value if it has been made; never waits.
    func ifReady() -> Value? {
        phase.withLock { phase in
            guard case .ready(let value) = phase else { return nil }
            return value
        }
    }

    /// The value, made now by `make` unless made before or being made by another caller (then suspends until
    /// that one has made it).
    func get(_ make: () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            if let value = value(madeBy: make, orWait: { continuation.resume(returning: $0) }) {
                continuation.resume(returning: value)
            }
        }
    }

    /// The value when it is ready or this caller makes it; nil when another caller is making it, and then
    /// `wait` is told the value once that caller has made it.
    private func value(madeBy make: () -> Value, orWait wait: @escaping @Sendable (Value) -> Void) -> Value? {
        let ready = phase.withLock { phase -> (value: Value?, claimed: Bool) in
            switch phase {
            case .ready(let value):
                return (value, false)
            case .making(let waiters):
                phase = .making(waiters + [wait])
                return (nil, false)
            case .empty:
                phase = .making([])
                return (nil, true)
            }
        }
        if let value = ready.value { return value }
        guard ready.claimed else { return nil }
        // Made with no lock held; then every waiter is told.
        let value = make()
        let waiters = phase.withLock { phase -> [@Sendable (Value) -> Void] in
            defer { phase = .ready(value) }
            guard case .making(let waiters) = phase else { return [] }
            return waiters
        }
        for waiter in waiters { waiter(value) }
        return value
    }
}
