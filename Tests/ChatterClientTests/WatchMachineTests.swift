@testable import ChatterClient
import Testing

/// A machine for `/getchatts` rows whose waits are all 0 (`FixedRandom(value: 0)`), or all at the ceiling.
func machine(top: Bool = false) -> WatchMachine<FixedRandom> {
    WatchMachine(width: ChattResponse.chattsWidth, generator: FixedRandom(value: top ? .max : 0))
}

let eventStream = response(200, "", headers: [("Content-Type", "text/event-stream")])

func chatt(_ id: String, _ message: String = "m", type: String = "message") -> ServerSentEventParser.Item {
    .event(ServerSentEvent(type: type, data: #"["n","\#(message)","\#(id)-uuid","t"]"#, lastEventID: id))
}

/// The wait of a subscribe or fetchPosition action.
func wait(_ action: WatchAction) -> Double? {
    switch action {
    case .subscribe(_, let seconds, _), .fetchPosition(let seconds, _): seconds
    default: nil
    }
}

@Suite struct WatchMachineTests {
    @Test func theFirstSubscriptionStartsAtTheEnd() {
        var watch = machine()
        #expect(watch.start() == .subscribe(lastEventID: nil, afterSeconds: 0, notice: nil))
    }

    @Test func eachChattIsShownAndTheNextSubscriptionResumesAfterTheLast() {
        var watch = machine()
        _ = watch.start()
        #expect(watch.streamAnswered(eventStream) == .read)
        #expect(watch.received(.comment) == .read)
        #expect(watch.received(chatt("1-1", "a")) == .show(["n", "a", "1-1-uuid", "t"]))
        #expect(watch.received(chatt("1-2", "b")) == .show(["n", "b", "1-2-uuid", "t"]))
        #expect(
            watch.streamEnded(nil)
                == .subscribe(
                    lastEventID: "1-2", afterSeconds: 0, notice: "the live feed ended; trying again in 0.0 s"))
        let cut = ClientError.connection("timed out receiving from h:1 (no progress for 37.5 s)")
        _ = watch.streamAnswered(eventStream)
        #expect(
            watch.streamEnded(cut)
                == .subscribe(
                    lastEventID: "1-2", afterSeconds: 0,
                    notice: "the live feed dropped: \(cut); trying again in 0.0 s"))
    }

    @Test func aRemovalIsShownAndMovesThePositionAndOneWhoseDataIsNotAnIdFails() {
        var watch = machine()
        _ = watch.start()
        _ = watch.streamAnswered(eventStream)
        let removal = ServerSentEvent(type: "delete", data: #""1-1-uuid""#, lastEventID: "2.a.7")
        #expect(watch.received(.event(removal)) == .showRemoval("1-1-uuid"))
        #expect(watch.lastEventID == "2.a.7")
        let broken = ServerSentEvent(type: "delete", data: "[1]", lastEventID: "2.a.8")
        guard case .fail(.malformedResponse) = watch.received(.event(broken)) else {
            Issue.record("a removal that names no id is malformed")
            return
        }
    }

    @Test func theBackOffGrowsUntilAStreamDeliversThenStartsOver() throws {
        var watch = machine(top: true)
        _ = watch.start()
        var waits: [Double] = []
        for _ in 0..<3 { waits.append(try #require(wait(watch.requestFailed(.connection("refused"))))) }
        _ = watch.streamAnswered(eventStream)
        waits.append(try #require(wait(watch.streamEnded(nil))))  // answered, but delivered nothing
        _ = watch.streamAnswered(eventStream)
        _ = watch.received(.comment)  // a heartbeat: the stream worked
        waits.append(try #require(wait(watch.streamEnded(nil))))
        #expect(zip(waits, [0.5, 1, 2, 4, 0.5]).allSatisfy { $0 <= $1 && $0 > $1 * 0.99 }, "\(waits)")
    }

    @Test(arguments: [400, 401, 404, 500])
    func refusalsEndTheWatchWithTheServersReason(status: Int) {
        var watch = machine()
        _ = watch.start()
        let answer = response(status, #"{"error":"no such thing"}"#, headers: [("Content-Type", "application/json")])
        #expect(watch.streamAnswered(answer) == .fail(.httpStatus(code: status, reason: "no such thing")))
    }

    @Test(arguments: [429, 502, 503, 504])
    func busyAnswersAreTriedAgain(status: Int) {
        var watch = machine()
        _ = watch.start()
        let action = watch.streamAnswered(response(status, #"{"error":"busy"}"#))
        #expect(
            action
                == .subscribe(
                    lastEventID: nil, afterSeconds: 0,
                    notice: "server answered \(status): busy; trying again in 0.0 s"))
    }

    @Test func retryAfterIsAFloorUpToTheCap() {
        var watch = machine()
        _ = watch.start()
        #expect(wait(watch.streamAnswered(response(503, "", headers: [("Retry-After", " 7 ")]))) == 7)
        #expect(wait(watch.streamAnswered(response(429, "", headers: [("Retry-After", "3600")]))) == 30)
        #expect(wait(watch.streamAnswered(response(503, "", headers: [("Retry-After", "soon")]))) == 0)
    }

    @Test func onlyAnEventStreamIsRead() {
        var watch = machine()
        let withCharset = response(200, "", headers: [("content-type", "Text/Event-Stream ; charset=utf-8")])
        #expect(watch.streamAnswered(withCharset) == .read)
        #expect(
            watch.streamAnswered(response(200, "[]", headers: [("Content-Type", "application/json")]))
                == .fail(.malformedResponse("the live feed answered with application/json content type")))
        #expect(
            watch.streamAnswered(response(200, ""))
                == .fail(.malformedResponse("the live feed answered with no content type")))
    }

    @Test func connectionFailuresAreTriedAgainAndTLSFailuresAreNot() {
        var watch = machine()
        _ = watch.start()
        #expect(
            watch.requestFailed(.connection("cannot connect"))
                == .subscribe(lastEventID: nil, afterSeconds: 0, notice: "cannot connect; trying again in 0.0 s"))
        #expect(watch.requestFailed(.tls("not trusted")) == .fail(.tls("not trusted")))
        #expect(watch.requestFailed(.malformedResponse("x")) == .fail(.malformedResponse("x")))
    }

    @Test func aResetRefetchesThePositionAndSubscribesFromIt() {
        var watch = machine()
        _ = watch.start()
        _ = watch.streamAnswered(eventStream)
        _ = watch.received(chatt("1-5"))
        let notice = "the server cannot resume the live feed where it was (reset): chatts may have been missed"
        #expect(watch.received(chatt("", type: "reset")) == .fetchPosition(afterSeconds: 0, notice: notice))
        // The fetch fails once, is tried again, and then answers.
        #expect(
            watch.requestFailed(.connection("reset by peer"))
                == .fetchPosition(afterSeconds: 0, notice: "reset by peer; trying again in 0.0 s"))
        #expect(
            watch.feedAnswered(response(503, "")).fetchesPosition, "a busy feed is asked again, not the stream")
        let feed = response(200, "[]", headers: [("Feed-Position", "2-0")])
        #expect(watch.feedAnswered(feed) == .subscribe(lastEventID: "2-0", afterSeconds: 0, notice: nil))
        #expect(watch.lastEventID == "2-0")
        // A drop after that resumes from the position, not from the id before the reset.
        _ = watch.streamAnswered(eventStream)
        #expect(watch.streamEnded(nil).lastEventIDSubscribed == "2-0")
    }

    @Test func resetsWithoutAChattBackOff() throws {
        var watch = machine(top: true)
        _ = watch.start()
        var waits: [Double] = []
        for _ in 0..<3 {
            _ = watch.streamAnswered(eventStream)
            _ = watch.received(.comment)
            waits.append(try #require(wait(watch.received(chatt("", type: "reset")))))
            _ = watch.feedAnswered(response(200, "[]", headers: [("Feed-Position", "2-0")]))
        }
        #expect(zip(waits, [0.5, 1, 2]).allSatisfy { $0 <= $1 && $0 > $1 * 0.99 }, "\(waits)")
        _ = watch.streamAnswered(eventStream)
        _ = watch.received(chatt("2-1"))
        let afterAChatt = try #require(wait(watch.received(chatt("", type: "reset"))))
        #expect(afterAChatt <= 0.5 && afterAChatt > 0.49, "a chatt shown starts the back-off over")
    }

    @Test func aFeedWithoutAPositionEndsTheWatch() {
        var watch = machine()
        for headers in [[], [("Feed-Position", "")], [("Feed-Position", "1 2")]] {
            #expect(
                watch.feedAnswered(response(200, "[]", headers: headers))
                    == .fail(.malformedResponse("the feed's answer has no usable Feed-Position header")))
        }
        #expect(
            watch.feedAnswered(response(404, #"{"error":"not found"}"#))
                == .fail(.httpStatus(code: 404, reason: "not found")))
    }

    @Test func otherEventsMoveTheIdButShowNothing() {
        var watch = machine()
        _ = watch.start()
        _ = watch.streamAnswered(eventStream)
        #expect(watch.received(.event(ServerSentEvent(type: "message", data: nil, lastEventID: "3-1"))) == .read)
        #expect(watch.received(chatt("3-2", type: "ping")) == .read)
        #expect(watch.lastEventID == "3-2")
        #expect(watch.received(.event(ServerSentEvent(type: "message", data: nil, lastEventID: ""))) == .read)
        #expect(watch.lastEventID == nil, "an empty id forgets the position")
    }

    @Test func badEventsEndTheWatch() {
        var watch = machine()
        func event(_ data: String, id: String = "1-1") -> ServerSentEventParser.Item {
            .event(ServerSentEvent(type: "message", data: data, lastEventID: id))
        }
        #expect(watch.received(event("[")) == .fail(.malformedResponse("the data of event 1-1 is not JSON")))
        #expect(
            watch.received(event(#"["n","m","i"]"#))
                == .fail(.malformedResponse("event 1-1 is not an array of 4 elements")))
        #expect(
            watch.received(event(#"["n","m","i",1]"#))
                == .fail(.malformedResponse("event 1-1 holds a value that is neither a string nor null")))
        #expect(
            watch.received(event("[]", id: "1 1"))
                == .fail(.malformedResponse("event id 1 1 cannot be sent back as Last-Event-ID")))
        #expect(watch.lastEventID == nil, "a chatt that was not shown does not move the position")
    }
}

extension WatchAction {
    var fetchesPosition: Bool {
        if case .fetchPosition = self { return true }
        return false
    }

    var lastEventIDSubscribed: String? {
        if case .subscribe(let id, _, _) = self { return id }
        return nil
    }
}
