import HTTPCore
import Locking

/// A response body stream whose pulls the test scripts: events queued by `push`, then `end` or `cut`.
final class ScriptedStream: ResponseBodyStream, Sendable {
    private struct State {
        var queued: [[UInt8]] = []
        var ending: StreamPull?
        var wake: (@Sendable () -> Void)?
        var opened = false
        var closed = false
        var pulls = 0
    }

    private let state = Locked(State())

    var isOpened: Bool { state.withLock { $0.opened } }
    var isClosed: Bool { state.withLock { $0.closed } }

    func open(wake: @escaping @Sendable () -> Void) {
        state.withLock {
            $0.opened = true
            $0.wake = wake
        }
    }

    func next(limit: Int) -> StreamPull {
        state.withLock { state in
            state.pulls += 1
            if !state.queued.isEmpty, limit > 0 { return .bytes(HTTPBody(state.queued.removeFirst())) }
            return state.queued.isEmpty ? state.ending ?? .idle : .idle
        }
    }

    func close() {
        state.withLock { $0.closed = true }
    }

    /// Queues an event and wakes the connection.
    func push(_ text: String) {
        let wake = state.withLock { state in
            state.queued.append(Array(text.utf8))
            return state.wake
        }
        wake?()
    }

    /// Ends the stream (`.ended` or `.cut`) once what is queued is pulled, and wakes the connection.
    func finish(_ ending: StreamPull) {
        let wake = state.withLock { state in
            state.ending = ending
            return state.wake
        }
        wake?()
    }
}
