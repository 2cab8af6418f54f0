import Locking

/// Holds whoever waits until opened (a flight, a follower); says when one is held.
public final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var held: [CheckedContinuation<Void, Never>] = []
        var watchers: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    public init() {}

    public func wait() async {
        await withCheckedContinuation { continuation in
            let (open, watchers) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                if !state.isOpen { state.held.append(continuation) }
                defer { state.watchers = [] }
                return (state.isOpen, state.watchers)
            }
            for watcher in watchers { watcher.resume() }
            if open { continuation.resume() }
        }
    }

    public func waitForWaiter() async {
        await withCheckedContinuation { continuation in
            let held = state.withLock { state in
                if state.held.isEmpty { state.watchers.append(continuation) }
                return !state.held.isEmpty
            }
            if held { continuation.resume() }
        }
    }

    public func open() {
        let held = state.withLock { state in
            state.isOpen = true
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }
}
