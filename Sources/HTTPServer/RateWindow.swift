/// The rate floor's measure (see `ConnectionTimeouts.minimumBytesPerSecond`): the bytes a connection moved since
/// a window began. Each machine starts one when there is something to measure (a request arriving piecewise, or
/// output once the socket is full) and checks it when it ends: a window that met the floor is followed by a new
/// one, one that did not ends the connection.
struct RateWindow: Equatable {
    private(set) var startedAt: Instant
    private(set) var bytes = 0

    init(startingAt now: Instant) {
        startedAt = now
    }

    /// What a window's end found.
    enum Verdict: Equatable {
        /// The window is not over yet.
        case running
        /// It carried enough: a new window begins now.
        case met
        /// It carried too little: the connection is too slow.
        case missed
    }

    mutating func add(_ count: Int) {
        bytes += count
    }

    /// When the window ends; nil when there is no floor.
    func end(_ timeouts: ConnectionTimeouts) -> Instant? {
        timeouts.minimumBytesPerWindow == nil ? nil : startedAt + timeouts.rateWindowSeconds
    }

    /// Checks the window at `now`; a window that met the floor is replaced by a new one from `now`.
    mutating func check(at now: Instant, _ timeouts: ConnectionTimeouts) -> Verdict {
        guard let floor = timeouts.minimumBytesPerWindow, now >= startedAt + timeouts.rateWindowSeconds else {
            return .running
        }
        guard Double(bytes) >= floor else { return .missed }
        self = RateWindow(startingAt: now)
        return .met
    }

    /// How the connection stands at the connection cap while this window runs (see `ConnectionStanding`).
    func standing(at now: Instant, _ timeouts: ConnectionTimeouts) -> ConnectionStanding? {
        .measured(bytes: bytes, since: startedAt, at: now, timeouts: timeouts)
    }
}
