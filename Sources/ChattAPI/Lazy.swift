import Locking

/// A value made at most once, on first demand, then shared. Callers that may wait get it (the first one
/// makes it while the others wait for that one: a single flight); callers that must not wait, such as an
/// I/O queue, only see it once it exists.
final class Lazy<Value: Sendable>: Sendable {
    private let value = Locked<Value?>(nil)
    /// Held while making the value. Separate from `value`, so that `ifReady()` never waits for a maker.
    private let making = Locked<Void>(())

    /// The value if it has been made; never waits.
    func ifReady() -> Value? {
        value.withLock { $0 }
    }

    /// The value, made now by `make` unless made before or being made by another caller (then waits for it).
    func get(_ make: () -> Value) -> Value {
        if let ready = ifReady() { return ready }
        return making.withLock { _ in
            if let ready = ifReady() { return ready }
            let made = make()
            value.withLock { $0 = made }
            return made
        }
    }
}
