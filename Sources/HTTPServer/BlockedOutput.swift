/// An HTTP/2 connection's output once the socket fills, measured as HTTP/1.1 measures a response: held to the send
/// idle timeout from the last write that made progress, and to the rate floor from when the socket first filled
/// (what the kernel took before does not count). Everything written ends both.
struct BlockedOutput {
    /// When a write last made progress while output was waiting; nil while nothing waits.
    private var since: Instant?
    /// The rate window since the socket filled; nil once everything is written.
    private var rateWindow: RateWindow?

    /// A write could not finish: the socket is full, after `written` bytes went out since the last report.
    mutating func writeBlocked(written: Int, at now: Instant) {
        if written > 0 || since == nil { since = now }
        if rateWindow == nil { rateWindow = RateWindow(startingAt: now) } else { rateWindow?.add(written) }
    }

    /// `written` bytes went out; with `drained`, everything queued has.
    mutating func wrote(_ written: Int, drained: Bool) {
        rateWindow?.add(written)
        guard drained else { return }
        since = nil
        rateWindow = nil
    }

    /// Whether the client takes the output slower than the floor, or not at all, as found at `now`.
    mutating func isStalled(at now: Instant, _ timeouts: ConnectionTimeouts) -> Bool {
        rateWindow?.check(at: now, timeouts) == .missed || since.map { now >= $0 + timeouts.sendIdleSeconds } == true
    }

    /// The earlier of the send idle deadline and the end of the rate window, while output waits.
    func deadline(_ timeouts: ConnectionTimeouts) -> Instant? {
        [since.map { $0 + timeouts.sendIdleSeconds }, rateWindow?.end(timeouts)].compactMap { $0 }.min()
    }

    /// How the connection stands at the cap while its output is blocked (see `ConnectionStanding`); `.some(nil)`
    /// when it is blocked but may not be shed, and nil while nothing is blocked.
    func standing(at now: Instant, _ timeouts: ConnectionTimeouts) -> ConnectionStanding?? {
        rateWindow.map { $0.standing(at: now, timeouts) }
    }
}
