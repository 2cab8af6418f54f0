import Dispatch
import TaskExecution

/// Every database deadline of the store's loop (a statement's, a wait for a connection, a queued post's, the
/// listener's checks) on one Dispatch timer source, armed for the soonest; each can be cancelled, so a statement
/// that ends in time leaves no timer behind.
final class LoopTimers: @unchecked Sendable {  // touched only on `queue`
    /// Names one armed deadline, for `cancel`.
    struct ID: Hashable, Sendable {
        fileprivate let value: Int
    }

    private let queue: DispatchQueue
    private let source: DispatchSourceTimer
    private var deadlines = DeadlineHeap<ID>()
    private var actions: [ID: () -> Void] = [:]
    private var lastID = 0
    /// What the source is set for; nil while nothing is armed.
    private var sourceSetFor: ContinuousClock.Instant?

    init(queue: DispatchQueue) {
        self.queue = queue
        source = DispatchSource.makeTimerSource(queue: queue)
        // Weak: a firing queued as the timers go (freed on another thread) must find nothing.
        source.setEventHandler { [weak self] in self?.fire() }
        source.activate()
    }

    deinit {
        source.cancel()
    }

    /// Calls `action` on the loop once `deadline` has passed, unless cancelled first. Call on the loop.
    @discardableResult
    func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping () -> Void) -> ID {
        lastID += 1
        let id = ID(value: lastID)
        deadlines.arm(id, at: deadline)
        actions[id] = action
        setSource()
        return id
    }

    /// Disarms `id`; nothing happens if it fired already. Call on the loop.
    func cancel(_ id: ID?) {
        guard let id, actions.removeValue(forKey: id) != nil else { return }
        deadlines.cancel(id)
        // The source may stay set for the cancelled deadline: it then fires, finds nothing due and is set again.
    }

    /// How many deadlines are armed, for tests.
    var armedCount: Int { actions.count }

    private func fire() {
        sourceSetFor = nil
        for id in deadlines.removeDue(at: .now) {
            actions.removeValue(forKey: id)?()
        }
        setSource()
    }

    /// Sets the source for the soonest deadline, unless it is set for that already.
    private func setSource() {
        guard let soonest = deadlines.soonest() else { return }
        if let sourceSetFor, sourceSetFor <= soonest { return }
        sourceSetFor = soonest
        source.schedule(deadline: DispatchTime(soonest))
    }
}
