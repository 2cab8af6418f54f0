/// How a connection stands when the server is at its connection cap and clients wait in the listen backlog: a
/// connection that waits on its own client gives up its slot. One may be shed when it has been idle (between
/// requests, before its first) or slower than the rate floor for `ConnectionTimeouts.sheddableAfterSeconds`, or
/// at once when it lingers after its final response; the slowest goes first, then the longest waiting. It would
/// lose its slot at the end of its rate window or idle deadline anyway; without this, clients wait behind an
/// attacker's connections for as long as opening new ones outpaces those deadlines (slowhttptest at 200
/// connections a second against 512 slots freed every 5 s: bench/RESULTS.md). A connection with a request at the
/// handler, or whose socket takes its output, has no standing and is never shed.
struct ConnectionStanding: Comparable, Sendable {
    /// Bytes a second its client moved since `since` (0 while idle).
    var bytesPerSecond: Double
    /// Since when it has waited on its client.
    var since: Instant

    /// A connection idle since `since`, once it has been for the grace period.
    static func idle(since: Instant, at now: Instant, timeouts: ConnectionTimeouts) -> Self? {
        guard now.seconds(since: since) >= timeouts.sheddableAfterSeconds else { return nil }
        return Self(bytesPerSecond: 0, since: since)
    }

    /// A connection lingering since `since`: its last response is written, and it waits only for its client to
    /// close (which slowhttptest's never do), so it may be shed at once.
    static func lingering(since: Instant) -> Self {
        Self(bytesPerSecond: 0, since: since)
    }

    /// A connection whose client moved `bytes` since `since`: a standing if that is below the rate floor and was
    /// measured over at least the grace period. With no floor, none.
    static func measured(bytes: Int, since: Instant, at now: Instant, timeouts: ConnectionTimeouts) -> Self? {
        let seconds = now.seconds(since: since)
        guard timeouts.minimumBytesPerSecond > 0, seconds > 0, seconds >= timeouts.sheddableAfterSeconds else {
            return nil
        }
        let rate = Double(bytes) / seconds
        return rate < timeouts.minimumBytesPerSecond ? Self(bytesPerSecond: rate, since: since) : nil
    }

    /// The one to shed sorts first: slower, then waiting since longer.
    static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.bytesPerSecond, lhs.since) < (rhs.bytesPerSecond, rhs.since)
    }
}
