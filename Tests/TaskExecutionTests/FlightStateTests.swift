@testable import TaskExecution
import Testing

/// A single flight's bookkeeping on a made-up clock, with waiters named by strings and values by numbers.
@Suite struct FlightStateTests {
    private static let start = ContinuousClock.now
    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { Self.start + .milliseconds(milliseconds) }
    private typealias State = FlightState<Int, String>

    @Test func aCallerWhoAsksWhileNothingFliesBeginsAFlightAndIsAnsweredWhenItLands() {
        var state = State()
        let (flight, actions) = state.ask()
        #expect(flight == 1 && actions == [.begin(1)])
        #expect(state.wait("a", for: flight, until: at(100), at: at(0)) == [.arm(at(100))])
        #expect(!state.isSettled)
        #expect(state.land(7, at: at(10)) == [.answer(["a"], 7), .arm(nil)])
        #expect(state.isSettled && state.landed?.flight == 1)
    }

    @Test func waitersOfTheFlightInTheAirShareItAndNoSecondFlightBegins() {
        var state = State()
        _ = state.ask()
        let (current, actions) = state.current()
        #expect(current == 1 && actions.isEmpty, "the flight in the air serves")
        _ = state.wait("a", for: 1, until: nil, at: at(0))
        #expect(state.wait("b", for: current, until: nil, at: at(0)) == [])
        #expect(state.land(1, at: at(5)) == [.answer(["a", "b"], 1)])
    }

    @Test func askingDuringAFlightWaitsForTheNextWhichBeginsAsSoonAsItLands() {
        var state = State()
        _ = state.ask()
        _ = state.wait("early", for: 1, until: nil, at: at(0))
        let (next, actions) = state.ask()
        #expect(next == 2 && actions.isEmpty, "one flight at a time")
        let (again, _) = state.ask()
        #expect(again == 2, "askers during one flight share the next")
        _ = state.wait("late", for: next, until: nil, at: at(0))
        #expect(state.land(1, at: at(5)) == [.answer(["early"], 1), .begin(2)])
        #expect(!state.isSettled)
        #expect(state.land(2, at: at(9)) == [.answer(["late"], 2)])
        #expect(state.isSettled)
    }

    @Test func aWaiterForAFlightThatLandedIsAnsweredAtOnceAndOneForAnOlderOneByANewer() {
        var state = State()
        _ = state.ask()
        _ = state.land(3, at: at(1))
        #expect(state.wait("a", for: 1, until: nil, at: at(0)) == [.answer(["a"], 3)])
        _ = state.ask()
        #expect(state.wait("b", for: 1, until: nil, at: at(0)) == [.answer(["b"], 3)], "the landed one, not a new one")
    }

    @Test func waitingForAFlightNobodyBeganBeginsIt() {
        var state = State()
        #expect(state.wait("a", for: 1, until: nil, at: at(0)) == [.begin(1)])
        #expect(state.land(4, at: at(1)) == [.answer(["a"], 4)])
    }

    @Test func aWaiterPastItsDeadlineIsAnsweredNilAndTheTimerMovesToTheNext() {
        var state = State()
        _ = state.ask()
        #expect(state.wait("soon", for: 1, until: at(100), at: at(0)) == [.arm(at(100))])
        #expect(state.wait("later", for: 1, until: at(300), at: at(0)) == [], "the soonest deadline stays armed")
        #expect(state.wait("sooner", for: 1, until: at(50), at: at(0)) == [.arm(at(50))])
        #expect(state.expired(at: at(120)) == [.answer(["soon", "sooner"], nil), .arm(at(300))])
        #expect(state.waiterCount == 1)
        #expect(state.land(8, at: at(200)) == [.answer(["later"], 8), .arm(nil)])
    }

    @Test func aWaiterWhoseDeadlineHasPassedAlreadyIsAnsweredNilAtOnceAndTheFlightStillBegins() {
        var state = State()
        #expect(state.wait("late", for: 1, until: at(5), at: at(10)) == [.answer(["late"], nil), .begin(1)])
        #expect(state.waiterCount == 0)
        #expect(state.land(3, at: at(20)) == [])
    }

    @Test func aTimerThatFiresEarlyAnswersNobodyAndIsArmedAgain() {
        var state = State()
        _ = state.ask()
        _ = state.wait("a", for: 1, until: at(100), at: at(0))
        #expect(state.expired(at: at(99)) == [.arm(at(100))])
    }
}
