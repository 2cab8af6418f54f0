import Dispatch
import Locking

/// The connections of one I/O queue whose response streams woke, served a batch at a time: one block on the queue
/// for a batch instead of one per connection, and between batches whatever else waits on the queue (socket events,
/// a handler's answer) has its turn. A feed event wakes every subscriber at once; served a block per connection,
/// the thousands of them on a queue held the answer to the very post that caused them behind all of them.
final class WakeList: @unchecked Sendable {  // `woken` is locked; the rest is touched on the queue only
    /// Connections served in one turn on the queue.
    static let perTurn = 64

    private struct Woken {
        var connections: [Connection] = []
        var scheduled = false
    }
    private let woken = Locked(Woken())

    /// Queues `connection`'s `streamWoke`; call at most once until its turn has begun (see `Connection`).
    func add(_ connection: Connection) {
        let schedule = woken.withLock { state -> Bool in
            state.connections.append(connection)
            defer { state.scheduled = true }
            return !state.scheduled
        }
        if schedule { connection.queue.async { self.serve() } }
    }

    /// On the queue: takes every connection woken so far and serves them a batch a turn.
    private func serve() {
        let connections = woken.withLock { state -> [Connection] in
            defer {
                state.connections = []
                state.scheduled = false
            }
            return state.connections
        }
        serve(connections[...])
    }

    private func serve(_ connections: ArraySlice<Connection>) {
        for connection in connections.prefix(Self.perTurn) { connection.wokenTurn() }
        let rest = connections.dropFirst(Self.perTurn)
        guard let queue = rest.first?.queue else { return }
        queue.async { self.serve(rest) }
    }
}
