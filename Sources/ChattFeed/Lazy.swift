import ChattModel
import Dispatch
import JSON
import Locking

/// A value made at most once, on first demand, then shared. Callers that may wait get it (the first one
/// makes it while the others wait for that one: a single flight); callers that must not wait, such as an
/// I/O queue, only see it once it exists.
final class Lazy<Value: Sendable>: Sendable {
    fileprivate enum Phase: Sendable {
        case empty
        /// Being made; the group is left once the value is ready.
        case making(DispatchGroup)
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

    /// The value, made now by `make` unless made before or being made by another caller (then waits for it).
    func get(_ make: () -> Value) -> Value {
        while true {
            switch phase.withLock({ $0.claim() }) {
            case .ready(let value):
                return value
            case .making(let maker):
                maker.wait()
            case .empty:
                // claim() left `.making` in place for this caller: make the value with no lock held.
                let value = make()
                let maker = phase.withLock { phase -> DispatchGroup? in
                    defer { phase = .ready(value) }
                    guard case .making(let group) = phase else { return nil }
                    return group
                }
                maker?.leave()
                return value
            }
        }
    }
}

extension Lazy.Phase {
    /// The phase as it was; when it was `.empty`, it is now `.making`, claimed by the caller.
    fileprivate mutating func claim() -> Self {
        guard case .empty = self else { return self }
        let maker = DispatchGroup()
        maker.enter()
        self = .making(maker)
        return .empty
    }
}
