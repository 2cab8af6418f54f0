/// A stream's own deadlines: every stream makes progress or goes. A request is held to the body idle timeout and
/// the rate floor as HTTP/1.1 holds a body. A response the client's flow-control window holds back is held to the
/// send idle timeout and, where it moves, to the rate floor: a window that stays shut never fills the socket, so
/// the connection's own deadlines, which measure a full socket, would never see it.
///
/// A response's rate is its body bytes sent since it could first go out, checked at the end of each rate window
/// in which it moved while it waited on the window: a client whose window opens in bursts (as most send
/// WINDOW_UPDATE after using half of it) is measured on its average, one that opens it a few bytes at a time falls
/// below the floor, and one that never opens it is held to the send idle timeout alone.
extension HTTP2Stream {
    /// How a response body moves against the client's flow-control window, from when it could first go out
    /// until it is all sent.
    struct SendPace {
        /// Body bytes sent.
        private(set) var sent = 0
        /// When the body first had a chance to go out: its rate is measured from then.
        private(set) var since: Instant?
        /// Since when it has waited on the client's window (its own or the connection's) without a byte going
        /// out; nil while it may send.
        private(set) var stalledSince: Instant?
        /// While it waits on the window, when the current rate check period began, and how much had been sent by
        /// then: its rate is checked at the end of each period in which it moved.
        fileprivate var periodFrom: Instant?
        fileprivate var sentAtPeriodFrom = 0

        /// `count` bytes went out in a DATA frame.
        mutating func dataSent(_ count: Int) {
            sent += count
            stalledSince = nil
        }

        /// Whether the client's window lets the body move, as found at `now`.
        mutating func windowObserved(open: Bool, at now: Instant) {
            if since == nil { since = now }
            guard !open else {
                stalledSince = nil
                return
            }
            if stalledSince == nil { stalledSince = now }
            if periodFrom == nil { beginPeriod(at: now) }
        }

        fileprivate mutating func beginPeriod(at now: Instant) {
            periodFrom = now
            sentAtPeriodFrom = sent
        }
    }

    /// Whether the response waits on the client's flow-control window.
    var isWaitingOnWindow: Bool { pace.stalledSince != nil }

    /// What the stream's deadlines found when the timer fired.
    enum Verdict: Equatable {
        case onTime
        /// The request body stalled for the body idle timeout: 408.
        case requestTimedOut
        /// The request body arrived slower than the floor over a window: 408.
        case requestTooSlow
        /// The response waited on the client's window for the send idle timeout, or moved slower than the floor:
        /// reset.
        case responseStalled
    }

    /// Checks the deadlines at `now`; a rate window (or rate check period) that met the floor begins again.
    func check(at now: Instant, _ timeouts: ConnectionTimeouts) -> Verdict {
        switch phase {
        case .arriving(let since):
            if now >= since + timeouts.bodyIdleSeconds { return .requestTimedOut }
            if bodyRate?.check(at: now, timeouts) == .missed { return .requestTooSlow }
        case .responding:
            let rateDue = rateCheck(timeouts).map { now >= $0 } ?? false
            guard let stalledSince = pace.stalledSince else {
                // It can send: it waits for the socket (the connection's deadlines measure that) or its turn.
                if rateDue { pace.periodFrom = nil }
                return .onTime
            }
            if now >= stalledSince + timeouts.sendIdleSeconds { return .responseStalled }
            if rateDue {
                if pace.sent > pace.sentAtPeriodFrom, movesBelowFloor(at: now, timeouts) { return .responseStalled }
                pace.beginPeriod(at: now)
            }
        default:
            break
        }
        return .onTime
    }

    /// The earliest of its deadlines, if it has any.
    func deadline(_ timeouts: ConnectionTimeouts) -> Instant? {
        switch phase {
        case .arriving(let since):
            return earliest(since + timeouts.bodyIdleSeconds, bodyRate?.end(timeouts))
        case .responding:
            return earliest(pace.stalledSince.map { $0 + timeouts.sendIdleSeconds }, rateCheck(timeouts))
        default:
            return nil
        }
    }

    /// How the stream stands at the connection cap (see `ConnectionStanding`): it waits on its client, either for
    /// its request or for window for its response, and has for the grace period or moves slower than the floor.
    /// Nil while the server works on it, or it moves.
    func standing(at now: Instant, _ timeouts: ConnectionTimeouts) -> ConnectionStanding? {
        switch phase {
        case .arriving(let since):
            if let bodyRate { return bodyRate.standing(at: now, timeouts) }
            return .idle(since: since, at: now, timeouts: timeouts)  // its header block is still arriving
        case .responding:
            guard let stalledSince = pace.stalledSince, let sendingSince = pace.since else { return nil }
            return .idle(since: stalledSince, at: now, timeouts: timeouts)
                ?? .measured(bytes: pace.sent, since: sendingSince, at: now, timeouts: timeouts)
        default:
            return nil
        }
    }

    /// When the response's rate is next checked: a rate window after the period began, while there is a floor.
    private func rateCheck(_ timeouts: ConnectionTimeouts) -> Instant? {
        guard let periodFrom = pace.periodFrom, timeouts.minimumBytesPerWindow != nil else { return nil }
        return periodFrom + timeouts.rateWindowSeconds
    }

    /// Whether the response has moved slower than the floor since it could first go out.
    private func movesBelowFloor(at now: Instant, _ timeouts: ConnectionTimeouts) -> Bool {
        guard let sendingSince = pace.since else { return false }
        let seconds = now.seconds(since: sendingSince)
        return seconds > 0 && Double(pace.sent) / seconds < timeouts.minimumBytesPerSecond
    }
}

/// The earlier of two optional instants.
private func earliest(_ first: Instant?, _ second: Instant?) -> Instant? {
    guard let first else { return second }
    guard let second else { return first }
    return min(first, second)
}
