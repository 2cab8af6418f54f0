@testable import HTTPServer
import Testing

/// Graceful shutdown on a made-up clock.
@Suite struct ShutdownMachineTests {
    static func at(_ seconds: Double) -> Instant {
        Instant(nanoseconds: 5_000_000_000) + seconds
    }

    @Test func withNoConnectionsItFinishesAtOnce() {
        var machine = ShutdownMachine()
        #expect(machine.begin(openConnections: 0, deadlineSeconds: 10, at: Self.at(0))
            == [.stopAccepting, .drainConnections, .armTimer(Self.at(10)), .finish])
        #expect(machine.phase == .finished)
        #expect(machine.timerFired(at: Self.at(10)) == [])
    }

    @Test func itFinishesWhenTheLastConnectionCloses() {
        var machine = ShutdownMachine()
        _ = machine.begin(openConnections: 2, deadlineSeconds: 10, at: Self.at(0))
        #expect(machine.connectionsChanged(openConnections: 1) == [])
        #expect(machine.timerFired(at: Self.at(3)) == [.armTimer(Self.at(10))], "early: armed again")
        #expect(machine.connectionsChanged(openConnections: 0) == [.finish])
        #expect(machine.connectionsChanged(openConnections: 0) == [], "once")
    }

    @Test func atTheDeadlineItClosesWhatRemainsThenFinishesAfterTheGrace() {
        var machine = ShutdownMachine()
        _ = machine.begin(openConnections: 1, deadlineSeconds: 10, at: Self.at(0))
        #expect(machine.timerFired(at: Self.at(10)) == [.closeConnections, .armTimer(Self.at(11))])
        #expect(machine.phase == .forcing(deadline: Self.at(11)))
        #expect(machine.timerFired(at: Self.at(11)) == [.finish], "even if a socket never reported closing")
    }

    @Test func closesDuringTheGraceFinishEarly() {
        var machine = ShutdownMachine()
        _ = machine.begin(openConnections: 1, deadlineSeconds: 2, at: Self.at(0))
        _ = machine.timerFired(at: Self.at(2))
        #expect(machine.connectionsChanged(openConnections: 0) == [.finish])
    }

    @Test func aSecondBeginDoesNothing() {
        var machine = ShutdownMachine()
        _ = machine.begin(openConnections: 1, deadlineSeconds: 2, at: Self.at(0))
        #expect(machine.begin(openConnections: 1, deadlineSeconds: 2, at: Self.at(1)) == [])
    }
}
