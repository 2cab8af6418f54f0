/// Graceful shutdown of a server as a pure state machine: stop accepting, ask every connection to drain, wait
/// for them until the deadline, then close what remains and give the closes a moment to finish.
struct ShutdownMachine {
    enum Phase: Equatable {
        case serving
        /// Connections finish what they are doing, until `deadline`.
        case draining(deadline: Instant)
        /// The deadline passed: remaining connections were closed; their sockets get until `deadline`.
        case forcing(deadline: Instant)
        case finished
    }

    enum Action: Equatable {
        case stopAccepting
        /// Ask every open connection to finish its request and close.
        case drainConnections
        /// Close every open connection now.
        case closeConnections
        case armTimer(Instant)
        /// Shutdown is over: cancel the shutdown timer and report to whoever asked for it.
        case finish
    }

    /// How long closed connections get to run their cancel handlers once forced.
    static let forcedCloseGraceSeconds = 1.0

    private(set) var phase = Phase.serving

    /// Starts shutting down at `now`, with `openConnections` open and `deadlineSeconds` for them to finish.
    mutating func begin(openConnections: Int, deadlineSeconds: Double, at now: Instant) -> [Action] {
        guard phase == .serving else { return [] }
        let deadline = now + deadlineSeconds
        phase = .draining(deadline: deadline)
        let actions: [Action] = [.stopAccepting, .drainConnections, .armTimer(deadline)]
        return actions + connectionsChanged(openConnections: openConnections)
    }

    /// A connection closed; `openConnections` remain.
    mutating func connectionsChanged(openConnections: Int) -> [Action] {
        guard openConnections == 0 else { return [] }
        switch phase {
        case .draining, .forcing:
            phase = .finished
            return [.finish]
        case .serving, .finished:
            return []
        }
    }

    mutating func timerFired(at now: Instant) -> [Action] {
        switch phase {
        case .draining(let deadline) where now >= deadline:
            let grace = now + Self.forcedCloseGraceSeconds
            phase = .forcing(deadline: grace)
            return [.closeConnections, .armTimer(grace)]
        case .forcing(let deadline) where now >= deadline:
            phase = .finished
            return [.finish]
        case .draining(let deadline), .forcing(let deadline):
            return [.armTimer(deadline)]
        case .serving, .finished:
            return []
        }
    }
}
