import Dispatch
import Locking

/// Work that many callers may need at once, done once for all of them: one flight at a time, and a caller waits for
/// the flight in the air or the next one (`FlightState` has the rules). Waiting holds no thread, and each waiter
/// stops at its own deadline, on one timer armed for the soonest. Flights run as tasks on Dispatch.
public final class SingleFlight<Value: Sendable>: Sendable {
    /// A flight's number: waiting for it waits for it or a newer one.
    public struct Ticket: Sendable, Hashable, Comparable {
        let flight: UInt64

        /// The first flight: waiting for it waits for a value made once, by the flight the first wait begins.
        public static var first: Ticket { Ticket(flight: 1) }

        public static func < (lhs: Ticket, rhs: Ticket) -> Bool { lhs.flight < rhs.flight }
    }

    private typealias Waiter = CheckedContinuation<Value?, Never>

    // @unchecked Sendable: only touched under `shell`'s lock (the timer is an existential Dispatch does not mark).
    private struct Shell: @unchecked Sendable {
        var state = FlightState<Value, Waiter>()
        var timer: DispatchSourceTimer?
    }

    private let work: @Sendable () async -> Value
    private let executor: DispatchTaskExecutor
    private let now: @Sendable () -> ContinuousClock.Instant
    private let shell = Locked(Shell())

    /// Flights run `work` on `executor`.
    public init(
        on executor: DispatchTaskExecutor = .shared, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        _ work: @escaping @Sendable () async -> Value
    ) {
        self.work = work
        self.executor = executor
        self.now = now
    }

    deinit {
        shell.withLock { $0.timer?.cancel() }
    }

    /// Asks for a flight that begins after now (at once, when none is in the air).
    @discardableResult
    public func ask() -> Ticket {
        Ticket(flight: transition { $0.ask() })
    }

    /// The flight in the air, or a new one when none is.
    public func current() -> Ticket {
        Ticket(flight: transition { $0.current() })
    }

    /// The newest flight asked for so far: waiting for it waits until all have landed. Nil before any was.
    public var asked: Ticket? {
        let flight = shell.withLock { $0.state.asked }
        return flight == 0 ? nil : Ticket(flight: flight)
    }

    /// How many callers wait for a flight.
    public var waiterCount: Int {
        shell.withLock { $0.state.waiterCount }
    }

    /// Whether flight `ticket`, or a newer one, has landed.
    public func hasLanded(_ ticket: Ticket) -> Bool {
        shell.withLock { ($0.state.landed?.flight ?? 0) >= ticket.flight }
    }

    /// Whether every flight asked for has landed.
    public var isSettled: Bool {
        shell.withLock { $0.state.isSettled }
    }

    /// The value of the last flight that landed, if it landed no longer than `age` ago (nil: at any time).
    public func landed(within age: Duration? = nil) -> Value? {
        let time = now()
        return shell.withLock { shell in
            guard let landed = shell.state.landed, age.map({ time - landed.at <= $0 }) ?? true else { return nil }
            return landed.value
        }
    }

    /// The value of flight `ticket` or a newer one, once it lands; nil if `deadline` comes first.
    public func value(of ticket: Ticket, before deadline: ContinuousClock.Instant? = nil) async -> Value? {
        let time = now()
        return await withCheckedContinuation { (continuation: Waiter) in
            transition { ((), $0.wait(continuation, for: ticket.flight, until: deadline, at: time)) }
        }
    }

    /// Applies an event to the state, arms the timer as it says under the same lock (so two events never arm it in
    /// the wrong order), then begins flights and answers waiters outside it.
    @discardableResult
    private func transition<Result>(
        _ event: (inout FlightState<Value, Waiter>) -> (Result, [FlightState<Value, Waiter>.Action])
    ) -> Result {
        let (result, actions) = shell.withLock { shell in
            let (result, actions) = event(&shell.state)
            for case .arm(let deadline) in actions { arm(&shell, deadline) }
            return (result, actions)
        }
        for action in actions {
            switch action {
            case .begin:
                Task(executorPreference: executor) { [self] in
                    let value = await work()
                    let time = now()
                    transition { ((), $0.land(value, at: time)) }
                }
            case .answer(let waiters, let value):
                for waiter in waiters { waiter.resume(returning: value) }
            case .arm:
                break
            }
        }
        return result
    }

    /// Points the timer at `deadline`, making it on first use; nil leaves it idle.
    private func arm(_ shell: inout Shell, _ deadline: ContinuousClock.Instant?) {
        guard let deadline else {
            shell.timer?.schedule(deadline: .distantFuture)
            return
        }
        if shell.timer == nil {
            let timer = DispatchSource.makeTimerSource(queue: .global())
            // Weakly: a waiter's deadline must not keep a flight (and what its value holds) alive.
            timer.setEventHandler { [weak self] in self?.expire() }
            timer.resume()
            shell.timer = timer
        }
        shell.timer?.schedule(deadline: DispatchTime(deadline))
    }

    private func expire() {
        let time = now()
        transition { ((), $0.expired(at: time)) }
    }
}
