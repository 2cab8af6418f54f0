import Dispatch

extension DispatchTime {
    /// The Dispatch time of `instant`, for arming a Dispatch timer at a deadline kept on Swift's clock. Measured
    /// from now on both clocks; an instant already past is now, and one beyond Dispatch's range the distant future.
    public init(_ instant: ContinuousClock.Instant) {
        let remaining = instant - .now
        guard remaining > .zero else {
            self = .now()
            return
        }
        let (seconds, attoseconds) = remaining.components
        guard seconds < Int64.max / 2_000_000_000 else {
            self = .distantFuture
            return
        }
        self = .now() + .nanoseconds(Int(seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
    }
}
