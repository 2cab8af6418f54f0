import HTTPCore
@testable import HTTPServer
import Testing

/// The HTTP/1.1 connection machine on a made-up clock: every transition and deadline, no sockets, no sleeps.
@Suite struct HTTP1ConnectionMachineTests {
    typealias Machine = HTTP1ConnectionMachine

    /// Distinct timeouts, so an armed instant tells which deadline it is.
    static let timeouts: ConnectionTimeouts = {
        var timeouts = ConnectionTimeouts()
        timeouts.minimumBytesPerSecond = 0  // the rate floor has tests of its own
        timeouts.headerSeconds = 10
        timeouts.bodyIdleSeconds = 7
        timeouts.sendIdleSeconds = 30
        timeouts.keepAliveIdleSeconds = 60
        timeouts.lingerSeconds = 5
        return timeouts
    }()

    /// `seconds` after an arbitrary origin.
    static func at(_ seconds: Double) -> Instant {
        Instant(nanoseconds: 1_000_000_000_000) + seconds
    }

    static func machine(maxRequests: Int = 1000, timeouts: ConnectionTimeouts = timeouts) -> Machine {
        var configuration = Machine.Configuration()
        configuration.timeouts = timeouts
        configuration.maxRequestsPerConnection = maxRequests
        var machine = Machine(configuration, at: at(0))
        #expect(machine.start() == .arm(at(10)), "the first byte gets the header deadline")
        return machine
    }

    static let ok = HTTPResponse.json(.ok, Array("{}".utf8))
    static let get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"

    /// The request the actions hand out, if any.
    static func handled(_ actions: Machine.Actions) -> HTTPRequest? {
        guard case .handle(let request)? = actions.work else { return nil }
        return request
    }

    /// The response the actions send, and its framing, if any.
    static func sent(_ actions: Machine.Actions) -> (HTTPResponse, Machine.Framing)? {
        guard case .send(let response, let framing)? = actions.work else { return nil }
        return (response, framing)
    }

    static let keptAlive = Machine.Framing(version: .http1_1, keepAlive: true, includesBody: true)
    static let closing = Machine.Framing(version: .http1_1, keepAlive: false, includesBody: true)

    // MARK: - One request

    @Test func aCompleteRequestIsHandedOutWithReadsSuspended() throws {
        var machine = Self.machine()
        let actions = machine.receive(Self.get, at: Self.at(1))
        #expect(Self.handled(actions)?.path == "/")
        #expect(machine.state == .processing && !machine.wantsInput)
        #expect(machine.timerFired(at: Self.at(10)) == .none, "no deadline while the handler works")
        #expect(machine.timerFired(at: Self.at(10_000)) == .none)
    }

    @Test func aKeptAliveConnectionWaitsForTheNextRequestWithTheKeepAliveDeadline() {
        var machine = Self.machine()
        _ = machine.receive(Self.get, at: Self.at(1))
        let send = machine.responseReady(Self.ok, at: Self.at(2))
        #expect(Self.sent(send)?.1 == Self.keptAlive)
        #expect(machine.state == .writing && machine.requestsServed == 1)
        #expect(machine.outputDrained(at: Self.at(3)) == .none, "the armed header deadline is earlier")
        #expect(machine.state == .reading && machine.wantsInput)
        // The armed deadline fires first and finds the real one later.
        #expect(machine.timerFired(at: Self.at(10)) == .arm(Self.at(63)))
        #expect(machine.timerFired(at: Self.at(62.9)) == .arm(Self.at(63)), "early: armed again")
        #expect(machine.timerFired(at: Self.at(63)) == .closing(.idle))
        #expect(machine.state == .closed)
    }

    @Test func theHeaderDeadlineRunsFromTheRequestsFirstByteAndGets408() throws {
        var machine = Self.machine()
        #expect(machine.receive("GET / HT", at: Self.at(3)) == .none, "armed for 10 s already, which is earlier")
        #expect(machine.timerFired(at: Self.at(10)) == .arm(Self.at(13)))
        #expect(machine.receive("TP/1.1\r\nHost: x\r\n", at: Self.at(12)) == .none, "more bytes do not extend it")
        let actions = machine.timerFired(at: Self.at(13))
        let (response, framing) = try #require(Self.sent(actions))
        #expect(!machine.wantsInput)
        #expect(response.status == .requestTimeout && framing == Self.closing)
        #expect(machine.receive("\r\n", at: Self.at(14)) == .none, "nothing more is parsed")
        #expect(machine.outputDrained(at: Self.at(14)) == .lingering(.requestError, armed: Self.at(19)))
    }

    @Test func aSilentNewConnectionIsClosedAtTheHeaderDeadline() {
        var machine = Self.machine()
        #expect(machine.timerFired(at: Self.at(9.9)) == .arm(Self.at(10)))
        #expect(machine.timerFired(at: Self.at(10)) == .closing(.idle), "nothing started: close without an answer")
    }

    @Test func theBodyIdleDeadlineRestartsWithEveryBodyByte() throws {
        var machine = Self.machine()
        let head = "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n"
        #expect(machine.receive(head, at: Self.at(1)) == .arm(Self.at(8)), "body idle: 7 s from the head")
        #expect(machine.receive("ab", at: Self.at(5)) == .none)
        #expect(machine.timerFired(at: Self.at(8)) == .arm(Self.at(12)))
        #expect(Self.sent(machine.timerFired(at: Self.at(12)))?.0.status == .requestTimeout)
    }

    @Test func aBodyThatArrivesInTimeIsHandedOut() throws {
        var machine = Self.machine()
        _ = machine.receive("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab", at: Self.at(1))
        let request = try #require(Self.handled(machine.receive("cd", at: Self.at(6))))
        #expect(request.body == Array("abcd".utf8))
    }

    @Test func theSendIdleDeadlineMovesOnlyWithProgress() {
        var machine = Self.machine()
        _ = machine.receive(Self.get, at: Self.at(1))
        _ = machine.responseReady(Self.ok, at: Self.at(2))
        #expect(machine.writeBlocked(written: 10, at: Self.at(4)) == .none)  // the header deadline (10) is earlier
        #expect(machine.timerFired(at: Self.at(10)) == .arm(Self.at(34)))
        #expect(machine.writeBlocked(written: 0, at: Self.at(20)) == .none, "no progress, same deadline")
        #expect(machine.timerFired(at: Self.at(34)) == .closing(.sendStalled))
    }

    // MARK: - Keep-alive, the cap and HTTP/1.0

    @Test func pipelinedRequestsAreHandedOutOneAtATimeInOrder() throws {
        var machine = Self.machine()
        let first = machine.receive("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n", at: Self.at(1))
        #expect(Self.handled(first)?.path == "/a")
        _ = machine.responseReady(Self.ok, at: Self.at(2))
        let next = machine.outputDrained(at: Self.at(3))
        #expect(Self.handled(next)?.path == "/b")
        #expect(!machine.wantsInput, "reads stay suspended")
        _ = machine.responseReady(Self.ok, at: Self.at(4))
        #expect(machine.outputDrained(at: Self.at(5)) == .none)
        #expect(machine.wantsInput)
    }

    @Test func theLastResponseUnderTheCapClosesAndLingers() throws {
        var machine = Self.machine(maxRequests: 2)
        _ = machine.receive(Self.get, at: Self.at(1))
        #expect(Self.sent(machine.responseReady(Self.ok, at: Self.at(1)))?.1 == Self.keptAlive)
        _ = machine.outputDrained(at: Self.at(1))
        _ = machine.receive(Self.get, at: Self.at(2))
        #expect(Self.sent(machine.responseReady(Self.ok, at: Self.at(2)))?.1 == Self.closing)
        #expect(machine.outputDrained(at: Self.at(3)) == .lingering(.served, armed: Self.at(8)))
        #expect(machine.state == .lingering && !machine.wantsInput)
        #expect(machine.receive(Self.get, at: Self.at(4)) == .none, "input after the final response is dropped")
        #expect(machine.timerFired(at: Self.at(7.9)) == .arm(Self.at(8)))
        #expect(machine.timerFired(at: Self.at(8)) == .closing(.served), "the linger deadline")
    }

    @Test func lingeringEndsWhenThePeerCloses() {
        var machine = Self.machine(maxRequests: 1)
        _ = machine.receive(Self.get, at: Self.at(1))
        _ = machine.responseReady(Self.ok, at: Self.at(1))
        _ = machine.outputDrained(at: Self.at(1))
        #expect(machine.peerClosed() == .closing(.served), "closed for the reason it lingered")
    }

    @Test func http10ClosesUnlessItAsksForKeepAlive() throws {
        var plain = Self.machine()
        _ = plain.receive("GET / HTTP/1.0\r\n\r\n", at: Self.at(1))
        #expect(Self.sent(plain.responseReady(Self.ok, at: Self.at(1)))?.1
            == Machine.Framing(version: .http1_0, keepAlive: false, includesBody: true))
        var kept = Self.machine()
        _ = kept.receive("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", at: Self.at(1))
        #expect(Self.sent(kept.responseReady(Self.ok, at: Self.at(1)))?.1
            == Machine.Framing(version: .http1_0, keepAlive: true, includesBody: true))
    }

    @Test func connectionCloseFromTheClientIsHonoured() throws {
        var machine = Self.machine()
        _ = machine.receive("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", at: Self.at(1))
        #expect(Self.sent(machine.responseReady(Self.ok, at: Self.at(1)))?.1 == Self.closing)
    }

    @Test func headAndNotModifiedSendNoBody() throws {
        var head = Self.machine()
        _ = head.receive("HEAD / HTTP/1.1\r\nHost: x\r\n\r\n", at: Self.at(1))
        #expect(Self.sent(head.responseReady(Self.ok, at: Self.at(1)))?.1.includesBody == false)
        var conditional = Self.machine()
        _ = conditional.receive(Self.get, at: Self.at(1))
        let notModified = HTTPResponse(status: .notModified, body: Array("the 200's body".utf8))
        #expect(Self.sent(conditional.responseReady(notModified, at: Self.at(1)))?.1.includesBody == false)
    }

    // MARK: - Errors and interim responses

    @Test func malformedInputGetsAFinalErrorAndNothingAfterItIsParsed() throws {
        var machine = Self.machine()
        let actions = machine.receive("GET / HTTP/1.1\r\nBad Header: 1\r\n\r\nGET /b HTTP/1.1\r\n\r\n", at: Self.at(1))
        let (response, framing) = try #require(Self.sent(actions))
        #expect(response.status == .badRequest && framing == Self.closing)
        #expect(machine.state == .writing)
        #expect(machine.responseReady(Self.ok, at: Self.at(2)) == .none, "no request is in flight")
        #expect(machine.outputDrained(at: Self.at(2)) == .lingering(.requestError, armed: Self.at(7)))
    }

    @Test func expectContinueGetsOneInterimResponseThenTheRequest() throws {
        var machine = Self.machine()
        let head = "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"
        let actions = machine.receive(head, at: Self.at(1))
        #expect(actions == Machine.Actions(work: .writeContinue, armTimer: Self.at(8)))
        #expect(machine.outputDrained(at: Self.at(1)) == .none, "the interim response leaves the state alone")
        #expect(machine.wantsInput)
        #expect(Self.handled(machine.receive("abc", at: Self.at(2)))?.body == Array("abc".utf8))
    }

    // MARK: - The peer and the server

    @Test func aPeerThatClosesWhileReadingIsClosed() {
        var machine = Self.machine()
        _ = machine.receive("GET / HT", at: Self.at(1))
        #expect(machine.peerClosed() == .closing(.clientClosed))
        #expect(machine.state == .closed)
        #expect(machine.timerFired(at: Self.at(100)) == .none)
    }

    @Test func aHalfClosedPeerStillGetsItsAnswerAndNothingMore() throws {
        var machine = Self.machine()
        _ = machine.receive(Self.get, at: Self.at(1))
        #expect(machine.peerClosed() == .none)
        #expect(Self.sent(machine.responseReady(Self.ok, at: Self.at(2)))?.1 == Self.closing)
        #expect(machine.outputDrained(at: Self.at(3)) == .lingering(.clientClosed, armed: Self.at(8)))
    }

    @Test func drainingClosesAnIdleConnectionAtOnce() {
        var machine = Self.machine()
        #expect(machine.drain() == .closing(.shutdown))
    }

    @Test func drainingLetsARequestInFlightFinishThenCloses() throws {
        var machine = Self.machine()
        _ = machine.receive(Self.get, at: Self.at(1))
        #expect(machine.drain() == .none)
        #expect(Self.sent(machine.responseReady(Self.ok, at: Self.at(2)))?.1 == Self.closing)
        #expect(machine.outputDrained(at: Self.at(3)) == .lingering(.shutdown, armed: Self.at(8)))
    }

    @Test func drainingWaitsForAHalfReadRequest() throws {
        var machine = Self.machine()
        _ = machine.receive("GET / HTTP/1.1\r\n", at: Self.at(1))
        #expect(machine.drain() == .none)
        _ = machine.receive("Host: x\r\n\r\n", at: Self.at(2))
        #expect(Self.sent(machine.responseReady(Self.ok, at: Self.at(2)))?.1 == Self.closing)
    }

    @Test func onlyAnEarlierDeadlineArmsTheTimerAgain() {
        var machine = Self.machine()
        for second in 1...5 {
            // A request each second, answered at once: the armed header deadline (10 s) stays the earliest.
            let handed = machine.receive(Self.get, at: Self.at(Double(second)))
            #expect(Self.handled(handed) != nil && handed.armTimer == nil)
            _ = machine.responseReady(Self.ok, at: Self.at(Double(second)))
            #expect(machine.outputDrained(at: Self.at(Double(second))) == .none)
        }
        #expect(machine.requestsServed == 5)
    }
}

/// The rate floor: bodies and blocked responses must move at least so many bytes per window.
@Suite struct HTTP1RateFloorTests {
    typealias Machine = HTTP1ConnectionMachine
    static let at = HTTP1ConnectionMachineTests.at

    /// The suite's timeouts with a floor of 100 bytes per second over 5-second windows (500 a window).
    static let timeouts: ConnectionTimeouts = {
        var timeouts = HTTP1ConnectionMachineTests.timeouts
        timeouts.minimumBytesPerSecond = 100
        timeouts.rateWindowSeconds = 5
        timeouts.bodyIdleSeconds = 100
        timeouts.sendIdleSeconds = 100
        return timeouts
    }()

    @Test func aBodyThatTricklesIsAnswered408AtTheEndOfItsWindow() throws {
        var machine = HTTP1ConnectionMachineTests.machine(timeouts: Self.timeouts)
        let head = "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n"
        #expect(machine.receive(head, at: Self.at(1)) == .arm(Self.at(6)), "the window, not body idle")
        _ = machine.receive(String(repeating: "a", count: 499), at: Self.at(4))
        let actions = machine.timerFired(at: Self.at(6))
        #expect(HTTP1ConnectionMachineTests.sent(actions)?.0.status == .requestTimeout, "499 bytes in a 500-byte window")
    }

    @Test func aHeadThatTricklesIsAnswered408AtTheEndOfItsWindow() throws {
        var machine = HTTP1ConnectionMachineTests.machine(timeouts: Self.timeouts)
        #expect(machine.receive("GET / HTTP/1.1\r\n", at: Self.at(1)) == .arm(Self.at(6)))
        _ = machine.receive("X-a: b\r\n", at: Self.at(4))
        let (response, framing) = try #require(HTTP1ConnectionMachineTests.sent(machine.timerFired(at: Self.at(6))))
        #expect(response.status == .requestTimeout && !framing.keepAlive)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"error":"request too slow"}"#)
    }

    @Test func aHeadThatArrivesWholeIsNeverMeasured() throws {
        var machine = HTTP1ConnectionMachineTests.machine(timeouts: Self.timeouts)
        let actions = machine.receive(HTTP1ConnectionMachineTests.get, at: Self.at(1))
        #expect(HTTP1ConnectionMachineTests.handled(actions) != nil)
        #expect(actions.armTimer == nil)
    }

    @Test func aBodyAtTheFloorGetsANewWindowEachTime() throws {
        var machine = HTTP1ConnectionMachineTests.machine(timeouts: Self.timeouts)
        _ = machine.receive("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 1600\r\n\r\n", at: Self.at(1))
        _ = machine.receive(String(repeating: "a", count: 500), at: Self.at(3))
        #expect(machine.timerFired(at: Self.at(6)) == .arm(Self.at(11)))
        _ = machine.receive(String(repeating: "a", count: 500), at: Self.at(8))
        #expect(machine.timerFired(at: Self.at(11)) == .arm(Self.at(16)))
        let request = HTTP1ConnectionMachineTests.handled(
            machine.receive(String(repeating: "a", count: 600), at: Self.at(12)))
        #expect(request?.body.count == 1600)
    }

    @Test func aReaderThatDrainsTooSlowlyIsCutOffAWindowAfterTheSocketFills() {
        var machine = HTTP1ConnectionMachineTests.machine(timeouts: Self.timeouts)
        _ = machine.receive(HTTP1ConnectionMachineTests.get, at: Self.at(1))
        _ = machine.responseReady(.json(.ok, Array(repeating: 1, count: 100_000)), at: Self.at(1))
        // The first block: what the kernel took before it does not count.
        #expect(machine.writeBlocked(written: 80_000, at: Self.at(1)) == .arm(Self.at(6)))
        #expect(machine.writeBlocked(written: 300, at: Self.at(4)) == .none)
        #expect(machine.timerFired(at: Self.at(6)) == .closing(.sendStalled), "300 bytes in a 500-byte window")
    }

    @Test func aReaderAtTheFloorKeepsItsConnection() {
        var machine = HTTP1ConnectionMachineTests.machine(timeouts: Self.timeouts)
        _ = machine.receive(HTTP1ConnectionMachineTests.get, at: Self.at(1))
        _ = machine.responseReady(.json(.ok, Array(repeating: 1, count: 100_000)), at: Self.at(1))
        _ = machine.writeBlocked(written: 80_000, at: Self.at(1))
        _ = machine.writeBlocked(written: 600, at: Self.at(5))
        #expect(machine.timerFired(at: Self.at(6)) == .arm(Self.at(11)))
        #expect(machine.outputDrained(at: Self.at(7)) == .none)
        #expect(machine.timerFired(at: Self.at(11)) == .arm(Self.at(67)), "drained: no window any more")
    }

    @Test func aFloorOfZeroMeasuresNothing() {
        var timeouts = Self.timeouts
        timeouts.minimumBytesPerSecond = 0
        var machine = HTTP1ConnectionMachineTests.machine(timeouts: timeouts)
        _ = machine.receive(HTTP1ConnectionMachineTests.get, at: Self.at(1))
        _ = machine.responseReady(.json(.ok, Array(repeating: 1, count: 100_000)), at: Self.at(1))
        #expect(machine.writeBlocked(written: 80_000, at: Self.at(1)) == .none)
        #expect(machine.timerFired(at: Self.at(10)) == .arm(Self.at(101)), "only send idle")
    }
}

extension HTTP1ConnectionMachine {
    /// `received` with the bytes of `text`.
    mutating func receive(_ text: String, at now: Instant) -> Actions {
        Array(text.utf8).withUnsafeBytes { received($0, at: now) }
    }
}

extension HTTP1ConnectionMachine.Actions {
    static let none = Self()

    static func arm(_ deadline: Instant) -> Self { Self(armTimer: deadline) }

    static func closing(_ reason: CloseReason) -> Self { Self(ending: .close(reason)) }

    static func lingering(_ reason: CloseReason, armed deadline: Instant) -> Self {
        Self(armTimer: deadline, ending: .linger(reason))
    }
}
