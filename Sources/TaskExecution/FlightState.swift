/// The bookkeeping of a single flight (`SingleFlight`): which flights were asked for, which one is in the air, who
/// waits for which and until when. Pure: events in, actions out; the shell performs the actions, so tests drive it
/// with made-up waiters and instants.
///
/// Flights are numbered from 1 in the order they begin, and one is in the air at a time. A caller asks for a flight
/// that begins after now (`ask`), or takes the one in the air (`current`), and waits for a flight at least that
/// new (`wait`): a later one will do, as it began later still. A flight that lands answers everyone waiting for it
/// or an older one, and the next begins at once if anyone asked for one after it. A waiter is answered nil at its
/// deadline, and the flight flies on for the others.
struct FlightState<Value, Waiter> {
    enum Action {
        /// Begin flight number so: run the work, then report `landed`.
        case begin(UInt64)
        /// Answer these waiters: with the value of the flight that landed, or nil when their deadline passed.
        case answer([Waiter], Value?)
        /// Report `expired` at this instant (nil: no waiter has a deadline), replacing any earlier timer.
        case arm(ContinuousClock.Instant?)
    }

    fileprivate struct Waiting {
        let waiter: Waiter
        let flight: UInt64
        let deadline: ContinuousClock.Instant?
    }

    /// The number of the last flight begun; 0 before the first.
    private(set) var begun: UInt64 = 0
    private(set) var isFlying = false
    /// The newest flight asked for.
    private(set) var asked: UInt64 = 0
    /// The last flight that landed: its number, value and when.
    private(set) var landed: (flight: UInt64, value: Value, at: ContinuousClock.Instant)?
    private var waiting: [Waiting] = []
    /// When the timer is armed for; nil while it is not.
    private var armedFor: ContinuousClock.Instant?

    init() {}

    /// Whether every flight asked for has landed.
    var isSettled: Bool { asked <= (landed?.flight ?? 0) }

    /// How many callers wait.
    var waiterCount: Int { waiting.count }

    /// A flight that begins after now: its number, begun at once when none is in the air.
    mutating func ask() -> (flight: UInt64, actions: [Action]) {
        let flight = begun + 1
        asked = max(asked, flight)
        return (flight, takeOff())
    }

    /// The flight in the air, or a new one when none is.
    mutating func current() -> (flight: UInt64, actions: [Action]) {
        isFlying ? (begun, []) : ask()
    }

    /// `waiter` wants flight `flight` or a newer one, until `deadline`: answered at once when one has landed, or
    /// nil when the deadline has passed already (`now`), else when one lands (which this asks for, if nobody has).
    mutating func wait(
        _ waiter: Waiter, for flight: UInt64, until deadline: ContinuousClock.Instant?, at now: ContinuousClock.Instant
    ) -> [Action] {
        if let landed, landed.flight >= flight { return [.answer([waiter], landed.value)] }
        asked = max(asked, flight)
        if let deadline, deadline <= now { return [.answer([waiter], nil)] + takeOff() }
        waiting.append(Waiting(waiter: waiter, flight: flight, deadline: deadline))
        return takeOff() + rearm()
    }

    /// Flight `begun` landed with `value` at `now`: its waiters are answered, and the next flight begins if asked.
    mutating func land(_ value: Value, at now: ContinuousClock.Instant) -> [Action] {
        isFlying = false
        landed = (begun, value, now)
        let answered = waiting.filter { $0.flight <= begun }
        waiting.removeAll { $0.flight <= begun }
        var actions: [Action] = answered.isEmpty ? [] : [.answer(answered.map(\.waiter), value)]
        actions += takeOff()
        return actions + rearm()
    }

    /// The timer fired at `now`: waiters past their deadline are answered nil.
    mutating func expired(at now: ContinuousClock.Instant) -> [Action] {
        armedFor = nil
        let late = waiting.filter { $0.deadline.map { $0 <= now } ?? false }
        waiting.removeAll { $0.deadline.map { $0 <= now } ?? false }
        let actions: [Action] = late.isEmpty ? [] : [.answer(late.map(\.waiter), nil)]
        return actions + rearm()
    }

    private mutating func takeOff() -> [Action] {
        guard !isFlying, asked > begun else { return [] }
        isFlying = true
        begun += 1
        return [.begin(begun)]
    }

    /// Arms the timer for the soonest deadline, when that is not what it is armed for.
    private mutating func rearm() -> [Action] {
        let soonest = waiting.compactMap(\.deadline).min()
        guard soonest != armedFor else { return [] }
        armedFor = soonest
        return [.arm(soonest)]
    }
}

extension FlightState: Sendable where Value: Sendable, Waiter: Sendable {}
extension FlightState.Action: Sendable where Value: Sendable, Waiter: Sendable {}
extension FlightState.Waiting: Sendable where Value: Sendable, Waiter: Sendable {}
extension FlightState.Action: Equatable where Value: Equatable, Waiter: Equatable {}
