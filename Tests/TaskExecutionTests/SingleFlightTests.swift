import Locking
import TaskExecution
import Testing

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
        let flight = SingleFlight<Int> { 9 }
        #expect(await flight.value(of: flight.ask()) == 9)
        #expect(flight.landed(within: .seconds(60)) == 9)
        #expect(flight.landed(within: .zero - .seconds(1)) == nil)
    }
}

/// Holds flights until opened; says when one is held.
private final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var held: [CheckedContinuation<Void, Never>] = []
        var watchers: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    func wait() async {
        await withCheckedContinuation { continuation in
            let (open, watchers) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                if !state.isOpen { state.held.append(continuation) }
                defer { state.watchers = [] }
                return (state.isOpen, state.watchers)
            }
            for watcher in watchers { watcher.resume() }
            if open { continuation.resume() }
        }
    }

    func waitForWaiter() async {
        await withCheckedContinuation { continuation in
            let held = state.withLock { state in
                if state.held.isEmpty { state.watchers.append(continuation) }
                return !state.held.isEmpty
            }
            if held { continuation.resume() }
        }
    }

    func open() {
        let held = state.withLock { state in
            state.isOpen = true
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }
}
