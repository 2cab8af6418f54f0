import Dispatch

/// A point in monotonic time, in nanoseconds since boot: the time connection machines reason about. They are
/// given it with every event, so tests drive them with made-up instants instead of sleeping.
struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    let nanoseconds: UInt64

    static let distantFuture = Instant(nanoseconds: .max)

    /// Now, on the clock Dispatch timers use.
    static var now: Instant { Instant(nanoseconds: DispatchTime.now().uptimeNanoseconds) }

    /// The same instant as a Dispatch time, for scheduling timers.
    var dispatchTime: DispatchTime {
        self == .distantFuture ? .distantFuture : DispatchTime(uptimeNanoseconds: nanoseconds)
    }

    /// `seconds` later (saturating at the distant future).
    static func + (instant: Instant, seconds: Double) -> Instant {
        guard instant != .distantFuture, seconds.isFinite else { return .distantFuture }
        let delta = seconds <= 0 ? 0 : min(seconds * 1e9, Double(UInt64.max / 2))
        let (sum, overflow) = instant.nanoseconds.addingReportingOverflow(UInt64(delta))
        return overflow ? .distantFuture : Instant(nanoseconds: sum)
    }

    /// Seconds from `earlier` to this instant (0 if `earlier` is later).
    func seconds(since earlier: Instant) -> Double {
        nanoseconds > earlier.nanoseconds ? Double(nanoseconds - earlier.nanoseconds) / 1e9 : 0
    }

    static func < (lhs: Instant, rhs: Instant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    var description: String {
        self == .distantFuture ? "distantFuture" : "\(Double(nanoseconds) / 1e9)s"
    }
}
