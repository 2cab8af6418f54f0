import CNGHTTP2
import HTTPCore
@testable import HTTPServer
import Testing

/// Every HTTP/2 stream makes progress or goes: responses the client's flow-control window holds back, request
/// bodies that trickle, and what a connection whose streams all wait on its client stands at the connection cap.
/// Made-up clock, nghttp2's client session, no sockets.
@Suite struct HTTP2StreamDeadlineTests {
    typealias Pair = HTTP2ConnectionMachineTests.Pair
    static let at = HTTP2ConnectionMachineTests.at

    /// No rate floor: the send idle timeout alone, at 4 seconds.
    static let sendIdleOnly: ConnectionTimeouts = {
        var timeouts = HTTP2ConnectionMachineTests.timeouts
        timeouts.sendIdleSeconds = 4
        return timeouts
    }()

    /// A floor of 100 bytes a second measured over 5-second windows, and send and body idle timeouts far away.
    static let withFloor: ConnectionTimeouts = {
        var timeouts = HTTP2ConnectionMachineTests.timeouts
        timeouts.minimumBytesPerSecond = 100
        timeouts.rateWindowSeconds = 5
        timeouts.sendIdleSeconds = 100
        timeouts.bodyIdleSeconds = 100
        return timeouts
    }()

    static let body = HTTPBody((0..<10_000).map { UInt8(truncatingIfNeeded: $0) })

    /// A client whose stream windows start at `window` bytes and grow only when it says so.
    static func pair(window: UInt32, timeouts: ConnectionTimeouts) -> Pair {
        let pair = Pair(peer: HTTP2Peer(initialWindow: window, consumesData: false), timeouts: timeouts)
        pair.handler = { request in request.path == "/slow" ? nil : HTTPResponse(status: .ok, body: Self.body) }
        return pair
    }

    /// Fires the timer at `now` if it is due, then moves bytes both ways.
    static func tick(_ pair: Pair, at now: Instant) {
        if let armed = pair.armed, armed <= now { pair.perform(pair.machine.timerFired(at: now)) }
        pair.exchange(at: now)
    }

    // MARK: - Responses held back by the client's window

    @Test func aResponseAZeroWindowHoldsBackIsResetAtTheSendTimeoutAndTheConnectionFollows() throws {
        let pair = Self.pair(window: 0, timeouts: Self.sendIdleOnly)
        let stream = pair.peer.request("GET", "/getmaps")
        pair.exchange(at: Self.at(1))
        #expect(pair.peer.responses[stream]?.status == 200 && pair.peer.responses[stream]?.body.isEmpty == true)
        #expect(pair.armed == Self.at(5), "the send idle timeout, from the moment it had to wait")
        pair.perform(pair.machine.timerFired(at: Self.at(4.9)))
        pair.deliver(at: Self.at(4.9))
        #expect(pair.peer.responses[stream]?.resetCode == nil)
        pair.perform(pair.machine.timerFired(at: Self.at(5)))
        pair.deliver(at: Self.at(5))
        #expect(pair.peer.responses[stream]?.resetCode == NGHTTP2_CANCEL.rawValue)
        #expect(pair.peer.goaways.map(\.code) == [NGHTTP2_NO_ERROR.rawValue], "nothing else moved: the connection goes")
        #expect(pair.lingering == .sendStalled)
    }

    @Test func aStreamAtTheHandlerKeepsTheConnectionWhenAStalledOneIsReset() throws {
        let pair = Self.pair(window: 0, timeouts: Self.sendIdleOnly)
        let stalled = pair.peer.request("GET", "/getmaps")
        let slow = pair.peer.request("GET", "/slow")
        pair.exchange(at: Self.at(1))
        pair.perform(pair.machine.timerFired(at: Self.at(5)))
        pair.deliver(at: Self.at(5))
        #expect(pair.peer.responses[stalled]?.resetCode == NGHTTP2_CANCEL.rawValue)
        #expect(pair.peer.goaways.isEmpty && pair.lingering == nil && pair.closed == nil)
        pair.answer(slow, .json(.ok, []))
        pair.exchange(at: Self.at(6))
        #expect(pair.peer.responses[slow]?.status == 200 && pair.peer.responses[slow]?.complete == true)
    }

    @Test func aWindowOpenedAFewBytesAtATimeIsHeldToTheFloor() throws {
        let pair = Self.pair(window: 0, timeouts: Self.withFloor)
        let stream = pair.peer.request("GET", "/getmaps")
        pair.exchange(at: Self.at(1))
        for second in 2...5 {
            pair.peer.allow(10, on: stream)
            Self.tick(pair, at: Self.at(Double(second)))
        }
        #expect(pair.peer.responses[stream]?.body.count == 40, "each byte of window was used at once")
        #expect(pair.peer.responses[stream]?.resetCode == nil)
        #expect(pair.armed == Self.at(6), "the rate is checked a window after it first had to wait")
        Self.tick(pair, at: Self.at(6))
        #expect(pair.peer.responses[stream]?.resetCode == NGHTTP2_CANCEL.rawValue, "40 bytes in 5 s, under 100/s")
        #expect(pair.lingering == .sendStalled)
    }

    @Test func aWindowThatNeverOpensIsHeldToTheSendTimeoutAloneNotTheFloor() throws {
        // The floor measures a response that moves; one that never does has the send idle timeout (100 s here).
        let pair = Self.pair(window: 0, timeouts: Self.withFloor)
        let stream = pair.peer.request("GET", "/getmaps")
        pair.exchange(at: Self.at(1))
        for second in stride(from: 2.0, through: 100.9, by: 1) {
            Self.tick(pair, at: Self.at(second))
        }
        #expect(pair.peer.responses[stream]?.resetCode == nil)
        Self.tick(pair, at: Self.at(101))
        #expect(pair.peer.responses[stream]?.resetCode == NGHTTP2_CANCEL.rawValue)
    }

    @Test func aWindowOpenedInBurstsIsMeasuredOnItsAverageAndTheResponseArrivesWhole() throws {
        // 1000 bytes of window every 7 seconds: under the floor in most windows, 143 bytes a second on average.
        let pair = Self.pair(window: 1000, timeouts: Self.withFloor)
        let stream = pair.peer.request("GET", "/getmaps")
        pair.exchange(at: Self.at(1))
        for second in 2...80 where pair.peer.responses[stream]?.complete != true {
            if second % 7 == 1 { pair.peer.allow(1000, on: stream) }
            Self.tick(pair, at: Self.at(Double(second)))
            #expect(pair.peer.responses[stream]?.resetCode == nil, "at \(second) s")
        }
        #expect(pair.peer.responses[stream]?.body == Self.body.bytes)
        #expect(pair.peer.goaways.isEmpty && pair.lingering == nil)
    }

    @Test func aResponseWaitsOnTheWindowOnlyOnceEverythingSentHasLeft() throws {
        // Until the socket takes the frames, the client has not had the bytes it would open its window for: a
        // full socket is the connection's deadlines' to measure (at the floor here), not the stream's.
        let pair = Self.pair(window: 1000, timeouts: Self.sendIdleOnly)
        let stream = pair.peer.request("GET", "/getmaps")
        pair.peer.output().withUnsafeBytes { pair.perform(pair.machine.received($0, at: Self.at(1))) }
        var output = OutputBuffer()
        pair.perform(pair.machine.produce(into: &output, room: 1 << 20, at: Self.at(1)))
        for second in 1...10 {
            pair.perform(pair.machine.writeBlocked(written: 1, at: Self.at(Double(second))))
            pair.perform(pair.machine.timerFired(at: Self.at(Double(second))))
        }
        #expect(pair.closed == nil && pair.lingering == nil)
        #expect(pair.peer.receive(output.takeAll()))
        pair.perform(pair.machine.outputDrained(written: 1, more: false, at: Self.at(10)))
        #expect(pair.armed == Self.at(14), "held to its window from now")
        pair.perform(pair.machine.timerFired(at: Self.at(14)))
        pair.deliver(at: Self.at(14))
        #expect(pair.peer.responses[stream]?.body.count == 1000)
        #expect(pair.peer.responses[stream]?.resetCode == NGHTTP2_CANCEL.rawValue)
    }

    @Test func aConnectionWhoseOnlyStreamWaitsOnTheWindowIsSheddableAfterTheGracePeriod() throws {
        let pair = Self.pair(window: 0, timeouts: Self.sendIdleOnly)
        pair.peer.request("GET", "/getmaps")
        pair.exchange(at: Self.at(1))
        #expect(pair.machine.standing(at: Self.at(1.5)) == nil, "within the grace period")
        let standing = try #require(pair.machine.standing(at: Self.at(2)))
        #expect(standing.bytesPerSecond == 0 && standing.since == Self.at(1))
    }

    @Test func aConnectionWithAStreamAtTheHandlerIsNeverShedWhateverItsOtherStreamsDo() throws {
        let pair = Self.pair(window: 0, timeouts: Self.sendIdleOnly)
        pair.peer.request("GET", "/getmaps")
        pair.peer.request("GET", "/slow")
        pair.exchange(at: Self.at(1))
        #expect(pair.machine.standing(at: Self.at(3)) == nil)
    }

    @Test func aConnectionWithAStreamThatMovesStandsAsThatStream() throws {
        // One stream stalled for long, one whose window opens a little every second: the connection is as
        // sheddable as its best stream, measured on what it sent since it could first go out.
        let pair = Self.pair(window: 0, timeouts: Self.withFloor)
        pair.peer.request("GET", "/getmaps")
        let moving = pair.peer.request("GET", "/getchatts")
        pair.exchange(at: Self.at(1))
        for second in 2...4 {
            pair.peer.allow(10, on: moving)
            pair.exchange(at: Self.at(Double(second)))
        }
        let standing = try #require(pair.machine.standing(at: Self.at(4.5)))
        #expect(standing.since == Self.at(1) && abs(standing.bytesPerSecond - 30 / 3.5) < 1e-9)
    }

    // MARK: - Request bodies

    @Test func aBodyTrickledSlowerThanTheFloorIs408AtTheEndOfItsWindow() throws {
        let pair = Pair(timeouts: Self.withFloor)
        let stream = pair.peer.request("POST", "/postmaps", body: Array(repeating: 1, count: 10), holdBody: true)
        pair.exchange(at: Self.at(1))
        for second in 2...5 {
            pair.peer.supply(Array(repeating: 1, count: 10), on: stream)
            Self.tick(pair, at: Self.at(Double(second)))
        }
        #expect(pair.rejected.isEmpty, "each byte keeps the idle deadline away")
        let standing = try #require(pair.machine.standing(at: Self.at(5)), "slower than the floor: sheddable")
        #expect(standing.since == Self.at(1) && standing.bytesPerSecond == 50 / 4)
        Self.tick(pair, at: Self.at(6))
        #expect(pair.rejected.map(\.status) == [408])
        let response = try #require(pair.peer.responses[stream])
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"error":"request too slow"}"#)
        #expect(response.resetCode == NGHTTP2_NO_ERROR.rawValue && pair.handled.isEmpty)
        #expect(pair.peer.goaways.map(\.code) == [NGHTTP2_NO_ERROR.rawValue], "nothing else moved: it follows")
        #expect(pair.lingering == .requestError)
    }

    @Test func aStreamAtTheHandlerKeepsTheConnectionWhenATrickledBodyIsCut() throws {
        let pair = Pair(timeouts: Self.withFloor)
        pair.handler = { _ in nil }
        let slow = pair.peer.request("GET", "/slow")
        let trickled = pair.peer.request("POST", "/postmaps", holdBody: true)
        pair.exchange(at: Self.at(1))
        for second in 2...6 {
            pair.peer.supply([1], on: trickled)
            Self.tick(pair, at: Self.at(Double(second)))
        }
        #expect(pair.peer.responses[trickled]?.status == 408)
        #expect(pair.peer.goaways.isEmpty && pair.lingering == nil)
        pair.answer(slow, .json(.ok, []))
        pair.exchange(at: Self.at(7))
        #expect(pair.peer.responses[slow]?.status == 200)
    }

    @Test func aBodyArrivingAtTheFloorIsHandled() throws {
        let pair = Pair(timeouts: Self.withFloor)
        let stream = pair.peer.request("POST", "/postmaps", holdBody: true)
        pair.exchange(at: Self.at(1))
        for second in 2...12 {
            pair.peer.supply(Array(repeating: 1, count: 150), on: stream, ending: second == 12)
            Self.tick(pair, at: Self.at(Double(second)))
        }
        #expect(pair.rejected.isEmpty)
        #expect(pair.handled.map(\.request.body.count) == [11 * 150])
    }

    // MARK: - The connection's budget for request bodies

    /// A machine that takes bodies of at most 1000 bytes and holds at most two of them at once.
    static func budgetPair() -> Pair {
        var limits = HTTPLimits()
        limits.maxBodyBytes = 1000
        var configuration = HTTP2Configuration()
        configuration.maxBufferedBodies = 2
        return Pair(limits: limits, configuration: configuration)
    }

    @Test func aStreamWhoseBodyWouldPassTheConnectionsBudgetIsRefusedAndTheOthersGoOn() throws {
        let pair = Self.budgetPair()
        let streams = (0..<3).map { _ in
            pair.peer.request("POST", "/postmaps", body: Array(repeating: 1, count: 900), holdBody: true)
        }
        pair.exchange(at: Self.at(1))
        let refused = streams.filter { pair.peer.responses[$0]?.resetCode == NGHTTP2_REFUSED_STREAM.rawValue }
        #expect(refused.count == 1, "2700 bytes held where 2000 may be")
        let kept = streams.filter { !refused.contains($0) }
        for stream in kept { pair.peer.supply([2], on: stream, ending: true) }
        pair.exchange(at: Self.at(2))
        #expect(Set(pair.handled.map(\.stream)) == Set(kept) && pair.handled.allSatisfy { $0.request.body.count == 901 })
        #expect(pair.closed == nil && pair.lingering == nil && pair.rejected.isEmpty)
        // Handed out, the bodies left the budget.
        let later = pair.peer.request("POST", "/postmaps", body: Array(repeating: 3, count: 900))
        pair.exchange(at: Self.at(3))
        #expect(pair.handled.last?.stream == later && pair.peer.responses[later]?.status == 200)
    }

    @Test func aStreamTheClientResetsGivesBackItsShareOfTheBudget() throws {
        let pair = Self.budgetPair()
        let first = pair.peer.request("POST", "/postmaps", body: Array(repeating: 1, count: 900), holdBody: true)
        let second = pair.peer.request("POST", "/postmaps", body: Array(repeating: 1, count: 900), holdBody: true)
        pair.exchange(at: Self.at(1))
        pair.peer.reset(first)
        pair.exchange(at: Self.at(2))
        let third = pair.peer.request("POST", "/postmaps", body: Array(repeating: 1, count: 900), holdBody: true)
        pair.exchange(at: Self.at(3))
        #expect(pair.peer.responses[third]?.resetCode == nil)
        for stream in [second, third] { pair.peer.supply([], on: stream, ending: true) }
        pair.exchange(at: Self.at(4))
        #expect(pair.handled.map(\.stream) == [second, third])
    }
}
