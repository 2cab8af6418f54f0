/// The one timer a connection machine keeps: armed again only when its next deadline comes sooner than the one it
/// is armed for; later deadlines are found when it fires. Shared by both protocol machines.
struct TimerArming {
    /// What the timer is armed for.
    private(set) var armedFor = Instant.distantFuture

    /// The instant to arm the timer at, when `next` is sooner than what it is armed for; nil otherwise.
    mutating func arm(for next: Instant) -> Instant? {
        guard next < armedFor else { return nil }
        armedFor = next
        return next
    }

    /// The timer fired: it is armed for nothing until the next `arm`.
    mutating func fired() {
        armedFor = .distantFuture
    }
}
