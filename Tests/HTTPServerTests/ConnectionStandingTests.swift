import HTTPCore
@testable import HTTPServer
import Testing

/// Which connections may be shed at the connection cap, and in what order, on a made-up clock.
@Suite struct ConnectionStandingTests {
    typealias Machine = HTTP1ConnectionMachine
    static let at = HTTP1ConnectionMachineTests.at

    /// A floor of 100 bytes per second over 5-second windows and a grace of 1 s; other deadlines far off.
    static let timeouts: ConnectionTimeouts = {
        var timeouts = HTTP1RateFloorTests.timeouts
        timeouts.sheddableAfterSeconds = 1
        return timeouts
    }()

    static func machine(timeouts: ConnectionTimeouts = Self.timeouts) -> Machine {
        HTTP1ConnectionMachineTests.machine(timeouts: timeouts)
    }

    @Test func theSlowestGoesFirstThenTheLongestWaiting() {
        let idleLong = ConnectionStanding(bytesPerSecond: 0, since: Self.at(1))
        let idleShort = ConnectionStanding(bytesPerSecond: 0, since: Self.at(5))
        let trickling = ConnectionStanding(bytesPerSecond: 20, since: Self.at(0))
        #expect([trickling, idleShort, idleLong].min() == idleLong)
        #expect(idleShort < trickling, "idle is slower than any trickle")
    }

    // MARK: - HTTP/1.1

    @Test func anIdleConnectionMayBeShedOnceIdleForTheGrace() {
        var machine = Self.machine()
        #expect(machine.standing(at: Self.at(0.5)) == nil, "new, and not idle long enough")
        _ = machine.receive(HTTP1ConnectionMachineTests.get, at: Self.at(2))
        #expect(machine.standing(at: Self.at(9)) == nil, "a request with the handler")
        _ = machine.responseReady(HTTP1ConnectionMachineTests.ok, at: Self.at(9))
        #expect(machine.standing(at: Self.at(9.5)) == nil, "a response the socket takes")
        _ = machine.outputDrained(at: Self.at(10))
        #expect(machine.standing(at: Self.at(10.5)) == nil)
        #expect(machine.standing(at: Self.at(11)) == ConnectionStanding(bytesPerSecond: 0, since: Self.at(10)))
    }

    @Test func aConnectionLingeringAfterItsFinalResponseMayBeShedAtOnce() {
        var machine = Self.machine()
        _ = machine.receive("BAD\r\n\r\n", at: Self.at(1))
        #expect(machine.standing(at: Self.at(1)) == nil, "the 400 is still being written")
        _ = machine.outputDrained(at: Self.at(2))
        #expect(machine.state == .lingering)
        #expect(machine.standing(at: Self.at(2)) == ConnectionStanding(bytesPerSecond: 0, since: Self.at(2)))
    }

    @Test func aBodyBelowTheFloorMayBeShedAndOneAboveItMayNot() {
        var machine = Self.machine()
        _ = machine.receive("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n", at: Self.at(1))
        _ = machine.receive(String(repeating: "a", count: 100), at: Self.at(2))
        #expect(machine.standing(at: Self.at(3)) == ConnectionStanding(bytesPerSecond: 50, since: Self.at(1)))
        _ = machine.receive(String(repeating: "a", count: 1000), at: Self.at(3.5))
        #expect(machine.standing(at: Self.at(4)) == nil, "1100 bytes in 3 s")
    }

    @Test func aResponseBlockedOnAFullSocketIsMeasuredFromTheBlock() {
        var machine = Self.machine()
        _ = machine.receive(HTTP1ConnectionMachineTests.get, at: Self.at(1))
        _ = machine.responseReady(.json(.ok, Array(repeating: 1, count: 100_000)), at: Self.at(1))
        _ = machine.writeBlocked(written: 80_000, at: Self.at(2))
        #expect(machine.standing(at: Self.at(4)) == ConnectionStanding(bytesPerSecond: 0, since: Self.at(2)))
        _ = machine.writeBlocked(written: 1000, at: Self.at(4))
        #expect(machine.standing(at: Self.at(4.5)) == nil, "1000 bytes in 2.5 s")
    }

    @Test func withoutAFloorOnlyIdleConnectionsMayBeShed() {
        var timeouts = Self.timeouts
        timeouts.minimumBytesPerSecond = 0
        var machine = Self.machine(timeouts: timeouts)
        #expect(machine.standing(at: Self.at(1)) == ConnectionStanding(bytesPerSecond: 0, since: Self.at(0)))
        _ = machine.receive("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n", at: Self.at(1))
        #expect(machine.standing(at: Self.at(9)) == nil, "a trickle is not measured against a floor of 0")
    }

    // MARK: - HTTP/2

    @Test func anIdleHTTP2ConnectionMayBeShedAndOneWithAHeldRequestMayNot() {
        let pair = HTTP2ConnectionMachineTests.Pair(timeouts: Self.timeouts)
        #expect(pair.machine.standing(at: Self.at(1)) == ConnectionStanding(bytesPerSecond: 0, since: Self.at(0)),
                "no preface yet")
        pair.peer.request("GET", "/")
        pair.exchange(at: Self.at(2))
        #expect(pair.machine.standing(at: Self.at(3)) == ConnectionStanding(bytesPerSecond: 0, since: Self.at(2)))
        pair.handler = { _ in nil }
        pair.peer.request("GET", "/held")
        pair.exchange(at: Self.at(4))
        #expect(pair.machine.standing(at: Self.at(30)) == nil, "a request with the handler")
    }

    @Test func anHTTP2ConnectionWhoseOutputIsBlockedIsMeasured() {
        let pair = HTTP2ConnectionMachineTests.Pair(timeouts: Self.timeouts)
        pair.peer.request("GET", "/")
        pair.exchange(at: Self.at(1))
        pair.perform(pair.machine.writeBlocked(written: 80_000, at: Self.at(2)))
        pair.perform(pair.machine.outputDrained(written: 100, more: true, at: Self.at(3)))
        #expect(pair.machine.standing(at: Self.at(4)) == ConnectionStanding(bytesPerSecond: 50, since: Self.at(2)))
        pair.perform(pair.machine.writeBlocked(written: 1000, at: Self.at(4)))
        #expect(pair.machine.standing(at: Self.at(4.5)) == nil)
    }
}
