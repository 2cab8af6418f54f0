import Locking
import TaskExecution
import Testing
import TestSupport

/// The shell: flights run as tasks, callers suspend until theirs lands, and a deadline answers nil.
@Suite struct SingleFlightTests {
    @Test func callersWaitingTogetherShareOneRunOfTheWork() async {
        let runs = Locked(0)
        let gate = Gate()
        let flight = SingleFlight<Int> {
            await gate.wait()
            return runs.withLock { runs in
                runs += 1
                return runs
            }
        }
        let ticket = flight.ask()
        let current = flight.current()
        #expect(current == ticket, "the flight in the air")
        async let first = flight.value(of: ticket)
        async let second = flight.value(of: current)
        await gate.waitForWaiter()
        while flight.waiterCount < 2 { await Task.yield() }
        gate.open()
        let values = await (first, second)
        #expect(values == (1, 1))
        #expect(runs.withLock { $0 } == 1)
        #expect(flight.isSettled && flight.landed() == 1)
    }

    @Test func aWaiterWhoseDeadlineHasPassedIsAnsweredNilWhileTheFlightFliesOn() async {
        let gate = Gate()
        let flight = SingleFlight<Int> {
            await gate.wait()
            return 5
        }
        let ticket = flight.ask()
        #expect(await flight.value(of: ticket, before: .now - .seconds(1)) == nil)
        #expect(!flight.isSettled)
        gate.open()
        #expect(await flight.value(of: ticket) == 5)
    }

    @Test func aValueLandedLongerAgoThanAskedIsNotOffered() async {
        // A made-up clock: a run under a sanitizer has been seen to stall a minute between two lines.
        let start = ContinuousClock.now
        let now = Locked(start)
        let flight = SingleFlight<Int>(now: { now.withLock { $0 } }) { 9 }
        #expect(await flight.value(of: flight.ask()) == 9)
        now.withLock { $0 = start + .seconds(60) }
        #expect(flight.landed(within: .seconds(60)) == 9)
        #expect(flight.landed(within: .seconds(59)) == nil)
    }
}
