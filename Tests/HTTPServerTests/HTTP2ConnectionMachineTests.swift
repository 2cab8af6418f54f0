import CNGHTTP2
import HTTPCore
@testable import HTTPServer
import Testing

/// The HTTP/2 connection machine against nghttp2's client session, on a made-up clock: no sockets, no sleeps.
@Suite struct HTTP2ConnectionMachineTests {
    static let timeouts: ConnectionTimeouts = {
        var timeouts = ConnectionTimeouts()
        timeouts.headerSeconds = 10
        timeouts.bodyIdleSeconds = 7
        timeouts.sendIdleSeconds = 30
        timeouts.keepAliveIdleSeconds = 60
        timeouts.minimumBytesPerSecond = 0  // the rate floor has tests of its own
        return timeouts
    }()

    static func at(_ seconds: Double) -> Instant {
        Instant(nanoseconds: 1_000_000_000_000) + seconds
    }

    static let date = "Tue, 01 Dec 2026 00:00:00 GMT"

    /// A machine and a client wired together through memory, with the driver's part played here: requests are
    /// taken and answered by `handler`, refused streams answered.
    final class Pair {
        let machine: HTTP2ConnectionMachine
        let peer: HTTP2Peer
        /// How the handler answers; nil holds the request (answer later with `answer`).
        var handler: (HTTPRequest) -> HTTPResponse? = { _ in .json(.ok, Array(#""ok""#.utf8)) }
        /// The request id every answer carries.
        var requestID = "r1"
        private(set) var handled: [(stream: Int32, request: HTTPRequest)] = []
        private(set) var rejected: [(stream: Int32, status: Int)] = []
        private(set) var goaways: [UInt32] = []
        private(set) var armed: Instant?
        /// Our side is shut and input is dropped: the GOAWAY is out, the machine waits for the client to close.
        private(set) var lingering: CloseReason?
        private(set) var closed: CloseReason?
        /// Whether to hand the machine's output to the client (off: a client that does not read).
        var delivering = true

        init(
            limits: HTTPLimits = HTTPLimits(), configuration: HTTP2Configuration = HTTP2Configuration(),
            maxStreams: Int = 1000, peer: HTTP2Peer = HTTP2Peer(),
            timeouts: ConnectionTimeouts = HTTP2ConnectionMachineTests.timeouts
        ) {
            machine = HTTP2ConnectionMachine(
                limits: limits, timeouts: timeouts, configuration: configuration,
                maxStreams: maxStreams, at: HTTP2ConnectionMachineTests.at(0))
            self.peer = peer
            perform(machine.start())
        }

        /// Moves bytes both ways until neither side has more.
        func exchange(at now: Instant = HTTP2ConnectionMachineTests.at(1)) {
            for _ in 0..<1000 where closed == nil {
                let request = peer.output()
                if !request.isEmpty { request.withUnsafeBytes { perform(machine.received($0, at: now)) } }
                let delivered = deliver(at: now)
                if request.isEmpty && !delivered { return }
            }
        }

        /// Hands the machine's frames to the client; true if there were any.
        @discardableResult
        func deliver(at now: Instant) -> Bool {
            guard delivering else { return false }
            var any = false
            while closed == nil {
                var output = OutputBuffer()
                perform(machine.produce(into: &output, room: 1 << 20, at: now))
                let bytes = output.takeAll()
                guard !bytes.isEmpty else { break }
                any = true
                peer.receive(bytes)
                perform(machine.outputDrained(written: bytes.count, more: true, at: now))
            }
            if closed == nil { perform(machine.outputDrained(written: 0, more: false, at: now)) }
            return any
        }

        func answer(_ stream: Int32, _ response: HTTPResponse) {
            machine.respond(response, on: stream, requestID: requestID, date: HTTP2ConnectionMachineTests.date)
        }

        /// Records what `actions` call for, then takes every refused stream and every request.
        func perform(_ actions: HTTP2ConnectionMachine.Actions) {
            if let deadline = actions.armTimer { armed = deadline }
            if case .goawaySent(let code)? = actions.work { goaways.append(code) }
            switch actions.ending {
            case .linger(let reason): lingering = reason
            case .close(let reason): closed = reason
            case nil: break
            }
            while let (response, stream, isHead) = machine.nextRejection() {
                rejected.append((stream, response.status.code))
                machine.respond(
                    toRejected: response, on: stream, isHead: isHead, requestID: requestID,
                    date: HTTP2ConnectionMachineTests.date)
            }
            while let (request, stream) = machine.nextRequest() {
                handled.append((stream, request))
                if let response = handler(request) { answer(stream, response) }
            }
        }
    }

    // MARK: - Requests and responses

    @Test func aGetIsAnsweredWithHTTP11sHeadersLessTheConnectionOnes() throws {
        let pair = Pair()
        pair.handler = { _ in
            var response = HTTPResponse.json(.ok, Array(#""chatterd""#.utf8))
            response.headers.add("Connection", "keep-alive")
            return response
        }
        let stream = pair.peer.request("GET", "/?a=1", headers: [("accept-encoding", "gzip")])
        pair.exchange()
        let request = try #require(pair.handled.first?.request)
        #expect(request.method == .GET && request.path == "/" && request.query == "a=1" && request.version == .http2)
        #expect(request.headers["Accept-Encoding"] == "gzip" && request.headers["Host"] == "localhost")
        let response = try #require(pair.peer.responses[stream])
        #expect(response.status == 200 && response.complete && response.body == Array(#""chatterd""#.utf8))
        #expect(response.header("content-type") == "application/json")
        #expect(response.header("content-length") == "10")
        #expect(response.header("date") == "Tue, 01 Dec 2026 00:00:00 GMT")
        #expect(response.header("x-request-id") == "r1")
        #expect(response.header("connection") == nil)
    }

    @Test func headAndNotModifiedCarryTheLengthButNoBody() throws {
        let pair = Pair()
        pair.handler = { request in
            request.path == "/304" ? HTTPResponse(status: .notModified, body: Array("the 200 body".utf8))
                : .json(.ok, Array("0123456789".utf8))
        }
        let head = pair.peer.request("HEAD", "/h")
        let notModified = pair.peer.request("GET", "/304")
        pair.exchange()
        #expect(pair.peer.responses[head]?.body.isEmpty == true && pair.peer.responses[head]?.complete == true)
        #expect(pair.peer.responses[head]?.header("content-length") == "10")
        #expect(pair.peer.responses[notModified]?.status == 304 && pair.peer.responses[notModified]?.body.isEmpty == true)
        #expect(pair.peer.responses[notModified]?.header("content-length") == "12")
    }

    @Test func aPostBodyReachesTheHandlerWhole() throws {
        let pair = Pair()
        let body = Array(#"{"name":"a","message":"b"}"#.utf8)
        pair.peer.request("POST", "/postmaps", headers: [("content-type", "application/json")], body: body)
        pair.exchange()
        #expect(pair.handled.first?.request.body == body)
        #expect(pair.handled.first?.request.method == .POST)
    }

    @Test func aBodyLargerThanTheInitialWindowArrivesByteForByte() throws {
        let big = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let pair = Pair()
        pair.handler = { _ in .json(.ok, big) }
        let stream = pair.peer.request("GET", "/getmaps")
        pair.exchange()
        #expect(pair.peer.responses[stream]?.body == big)
        #expect(pair.peer.responses[stream]?.complete == true)
    }

    @Test(arguments: [65_535, 1000])
    func aBodyOfManySegmentsArrivesByteForByteWithFramesSpanningThem(_ window: Int) throws {
        // Segment ends inside frames and frame ends inside segments (frames carry at most 16 384 bytes here),
        // one-byte segments, one larger than several frames.
        let sizes = [1, 16_383, 2, 40_000, 1, 1, 5_000, 16_384, 70_001, 3]
        let storage = (0..<sizes.reduce(0, +)).map { UInt8(truncatingIfNeeded: $0 * 31 + 5) }
        var segments: [ArraySlice<UInt8>] = []
        for size in sizes { segments.append(storage[segments.reduce(0) { $0 + $1.count }...].prefix(size)) }
        let body = HTTPBody(segments: segments)
        let pair = Pair(peer: HTTP2Peer(initialWindow: UInt32(window), consumesData: false))
        pair.handler = { _ in HTTPResponse(status: .ok, body: body) }
        let stream = pair.peer.request("GET", "/getmaps")
        pair.exchange()
        while pair.peer.responses[stream]?.complete != true {
            let received = pair.peer.responses[stream]?.body.count ?? 0
            #expect(received % window == 0, "as much as each window allows")
            pair.peer.allow(Int32(window), on: stream)
            pair.exchange()
            #expect((pair.peer.responses[stream]?.body.count ?? 0) > received, "progress at every window")
        }
        #expect(pair.peer.responses[stream]?.body == storage)
        #expect(pair.peer.responses[stream]?.header("content-length") == String(storage.count))
    }

    @Test func aOneKibibyteClientWindowIsHonouredExactlyUntilWindowUpdate() throws {
        let big = (0..<10_000).map { UInt8(truncatingIfNeeded: $0) }
        let pair = Pair(peer: HTTP2Peer(initialWindow: 1024, consumesData: false))
        pair.handler = { _ in .json(.ok, big) }
        let stream = pair.peer.request("GET", "/getmaps")
        pair.exchange()
        #expect(pair.peer.responses[stream]?.body.count == 1024)
        pair.peer.allow(1000, on: stream)
        pair.exchange()
        #expect(pair.peer.responses[stream]?.body.count == 2024)
        #expect(pair.peer.responses[stream]?.body == Array(big.prefix(2024)))
    }

    @Test func aHundredStreamsRunAtOnceAndTheNextIsRefused() throws {
        let pair = Pair(peer: HTTP2Peer(assumedStreamLimit: 1000))
        pair.handler = { _ in nil }
        let streams = (0..<101).map { pair.peer.request("GET", "/\($0)") }
        pair.exchange()
        #expect(pair.handled.count == 100)
        #expect(pair.peer.responses[streams[100]]?.resetCode == NGHTTP2_REFUSED_STREAM.rawValue, "the 101st")
        for (stream, _) in pair.handled { pair.answer(stream, .json(.ok, [])) }
        pair.exchange()
        #expect(streams.prefix(100).allSatisfy { pair.peer.responses[$0]?.status == 200 })
        #expect(pair.closed == nil, "a stream error leaves the connection open")
    }

    // MARK: - Limits answered like HTTP/1.1

    @Test func aDeclaredBodyOverTheLimitIs413AndTheStreamIsResetWithNoError() throws {
        let pair = Pair()
        let stream = pair.peer.request(
            "POST", "/postmaps", headers: [("content-length", "70000")], body: Array(repeating: 1, count: 70_000))
        pair.exchange()
        #expect(pair.handled.isEmpty)
        #expect(pair.rejected.map(\.status) == [413])
        let response = try #require(pair.peer.responses[stream])
        #expect(response.status == 413 && response.complete)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"error":"request body too large"}"#)
        #expect(response.resetCode == NGHTTP2_NO_ERROR.rawValue)
        #expect(pair.closed == nil)
    }

    @Test func dataOverTheLimitWithoutContentLengthIs413() throws {
        var limits = HTTPLimits()
        limits.maxBodyBytes = 1000
        let pair = Pair(limits: limits)
        let stream = pair.peer.request("POST", "/postmaps", body: Array(repeating: 1, count: 5000))
        pair.exchange()
        #expect(pair.handled.isEmpty)
        #expect(pair.peer.responses[stream]?.status == 413)
    }

    @Test func tooManyOrTooLargeHeadersAre431() throws {
        let pair = Pair()
        let many = pair.peer.request("GET", "/", headers: (0..<101).map { ("x-h\($0)", "v") })
        let large = pair.peer.request("GET", "/", headers: [("x-big", String(repeating: "a", count: 20_000))])
        pair.exchange()
        #expect(pair.peer.responses[many]?.status == 431)
        #expect(pair.peer.responses[large]?.status == 431)
        #expect(pair.handled.isEmpty)
    }

    @Test func aRejectedHeadIsAnsweredWithoutABody() throws {
        // A body on a HEAD response is a stream error for the client (RFC 9113 §8.1.1): it lost the answer.
        let pair = Pair()
        let tooMany = pair.peer.request("HEAD", "/getmaps", headers: (0..<101).map { ("x-h\($0)", "v") })
        let expectation = pair.peer.request("HEAD", "/getmaps", headers: [("expect", "nothing")])
        pair.exchange()
        for (stream, status) in [(tooMany, 431), (expectation, 417)] {
            let response = try #require(pair.peer.responses[stream])
            #expect(response.status == status && response.complete && response.body.isEmpty)
            #expect(response.resetCode == nil || response.resetCode == NGHTTP2_NO_ERROR.rawValue)
            #expect(Int(response.header("content-length") ?? "") ?? 0 > 0, "the length of the error it stands for")
        }
    }

    @Test func unknownMethodIs501AndAnAbsoluteFormPathIs400() throws {
        let pair = Pair()
        let brew = pair.peer.request("BREW", "/")
        let absolute = pair.peer.request("GET", "https://localhost/")
        pair.exchange()
        #expect(pair.peer.responses[brew]?.status == 501)
        #expect(pair.peer.responses[absolute]?.resetCode != nil || pair.peer.responses[absolute]?.status == 400)
        #expect(pair.handled.isEmpty)
    }

    @Test func malformedRequestsGetAStreamErrorAndTheConnectionGoesOn() throws {
        let pair = Pair()
        // (Upper-case names are tested end to end: nghttp2's client lower-cases what it sends.)
        let connection = pair.peer.request("GET", "/", headers: [("connection", "close")])
        let length = pair.peer.request("POST", "/p", headers: [("content-length", "5")], body: [1, 2, 3])
        let fine = pair.peer.request("GET", "/fine")
        pair.exchange()
        for stream in [connection, length] {
            #expect(pair.peer.responses[stream]?.resetCode == NGHTTP2_PROTOCOL_ERROR.rawValue, "stream \(stream)")
        }
        #expect(pair.handled.map(\.request.path) == ["/fine"])
        #expect(pair.peer.responses[fine]?.status == 200)
        #expect(pair.closed == nil)
    }

    // MARK: - Deadlines

    @Test func aClientThatSendsNoPrefaceIsClosedAtTheHeaderDeadline() {
        let pair = Pair()
        #expect(pair.armed == Self.at(10))
        pair.perform(pair.machine.timerFired(at: Self.at(9)))
        #expect(pair.closed == nil)
        pair.perform(pair.machine.timerFired(at: Self.at(10)))
        #expect(pair.closed == .idle)
    }

    @Test func aStalledRequestBodyIsAnswered408AfterTheBodyIdleTimeout() throws {
        let pair = Pair()
        // A request whose body never comes: HEADERS without END_STREAM.
        let stream = pair.peer.request("POST", "/postmaps", headers: [("content-length", "10")], body: nil, holdBody: true)
        pair.exchange(at: Self.at(1))
        pair.perform(pair.machine.timerFired(at: Self.at(1)))
        pair.perform(pair.machine.timerFired(at: Self.at(7)))
        #expect(pair.rejected.isEmpty, "not yet")
        pair.perform(pair.machine.timerFired(at: Self.at(8)))
        pair.deliver(at: Self.at(8))
        #expect(pair.peer.responses[stream]?.status == 408)
        #expect(pair.closed == nil && pair.peer.goaways.count == 1, "its only stream gone, the connection follows")
        #expect(pair.lingering == .requestError)
    }

    @Test func anIdleConnectionGetsGoawayThenCloses() throws {
        let pair = Pair()
        pair.peer.request("GET", "/")
        pair.exchange(at: Self.at(1))
        #expect(pair.armed == Self.at(10), "the preface deadline was armed first")
        pair.perform(pair.machine.timerFired(at: Self.at(10)))
        #expect(pair.armed == Self.at(61), "idle from the moment the last stream closed")
        pair.perform(pair.machine.timerFired(at: Self.at(61)))
        pair.deliver(at: Self.at(61))
        #expect(pair.peer.goaways.last?.code == NGHTTP2_NO_ERROR.rawValue)
        #expect(pair.goaways == [NGHTTP2_NO_ERROR.rawValue])
        #expect(pair.lingering == .idle && !pair.machine.wantsInput)
        pair.perform(pair.machine.peerClosed())
        #expect(pair.closed == .idle)
    }

    @Test func afterAGoawayTheConnectionLingersUntilTheClientClosesOrTheDeadline() throws {
        // A client still sending when we close would get a reset, and could lose the GOAWAY (RFC 9113 §6.8).
        let pair = Pair()
        pair.exchange(at: Self.at(1))
        pair.perform(pair.machine.timerFired(at: Self.at(61)))
        pair.deliver(at: Self.at(61))
        #expect(pair.peer.goaways.count == 1 && pair.lingering == .idle && pair.closed == nil)
        #expect(pair.armed == Self.at(61 + Self.timeouts.lingerSeconds))
        pair.peer.request("GET", "/late")
        pair.exchange(at: Self.at(62))
        #expect(pair.handled.isEmpty, "nothing is read while lingering")
        pair.perform(pair.machine.timerFired(at: Self.at(62)))
        #expect(pair.closed == nil)
        pair.perform(pair.machine.timerFired(at: Self.at(61 + Self.timeouts.lingerSeconds)))
        #expect(pair.closed == .idle)
    }

    @Test func aConnectionErrorsGoawayIsWrittenBeforeLingering() throws {
        let pair = Pair()
        pair.exchange()
        // WINDOW_UPDATE with a zero increment on the connection: a connection error (RFC 9113 §6.9).
        let bad: [UInt8] = [0, 0, 4, 0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        bad.withUnsafeBytes { pair.perform(pair.machine.received($0, at: Self.at(2))) }
        pair.deliver(at: Self.at(2))
        #expect(pair.peer.goaways.last?.code == NGHTTP2_PROTOCOL_ERROR.rawValue)
        #expect(pair.goaways == [NGHTTP2_PROTOCOL_ERROR.rawValue])
        #expect(pair.lingering == .protocolError && pair.closed == nil)
    }

    @Test func aConnectionWhoseWritesMakeNoProgressClosesAtTheSendIdleDeadline() {
        let pair = Pair()
        pair.exchange(at: Self.at(1))
        pair.perform(pair.machine.writeBlocked(written: 100, at: Self.at(2)))
        pair.perform(pair.machine.timerFired(at: Self.at(31)))
        #expect(pair.closed == nil)
        pair.perform(pair.machine.timerFired(at: Self.at(32)))
        #expect(pair.closed == .sendStalled)
    }

    // MARK: - GOAWAY

    @Test func drainingSendsGoawayWithTheLastStreamAndLetsItFinish() throws {
        let pair = Pair()
        pair.handler = { _ in nil }
        let stream = pair.peer.request("GET", "/slow")
        pair.exchange()
        pair.perform(pair.machine.drain())
        pair.exchange()
        #expect(pair.peer.goaways.first?.lastStream == stream)
        #expect(pair.peer.goaways.first?.code == NGHTTP2_NO_ERROR.rawValue)
        #expect(pair.closed == nil && pair.lingering == nil, "its stream is still in flight")
        pair.answer(stream, .json(.ok, Array("done".utf8)))
        pair.exchange()
        #expect(pair.peer.responses[stream]?.body == Array("done".utf8))
        #expect(pair.lingering == .shutdown)
    }

    @Test func nothingIsReadWhileOurGoawayWaitsToBeWritten() throws {
        // Read meanwhile, a new stream would be taken by nghttp2 and handled, though the GOAWAY then tells the
        // client it was not processed (RFC 9113 §6.8): a post sent again elsewhere would be stored twice.
        let pair = Pair()
        pair.handler = { _ in nil }
        let first = pair.peer.request("GET", "/slow")
        pair.exchange()
        pair.perform(pair.machine.drain())
        #expect(!pair.machine.wantsInput)
        pair.peer.request("POST", "/postmaps", body: Array("{}".utf8))
        pair.peer.output().withUnsafeBytes { pair.perform(pair.machine.received($0, at: Self.at(1))) }
        #expect(pair.handled.map(\.stream) == [first], "a stream above the GOAWAY's last was handled")
        pair.deliver(at: Self.at(1))
        #expect(pair.peer.goaways.first?.lastStream == first)
        #expect(pair.machine.wantsInput, "reading goes on once the GOAWAY is out")
        pair.answer(first, .json(.ok, []))
        pair.exchange()
        #expect(pair.peer.responses[first]?.status == 200 && pair.lingering == .shutdown)
    }

    @Test func theStreamCapSendsGoawayAndServesTheStreamsBelowIt() throws {
        let pair = Pair(maxStreams: 3)
        let streams = (0..<3).map { pair.peer.request("GET", "/\($0)") }
        pair.exchange()
        #expect(streams.allSatisfy { pair.peer.responses[$0]?.status == 200 })
        #expect(pair.peer.goaways.first?.lastStream == streams[2])
        #expect(pair.lingering == .served)
    }

    @Test func rapidResetsPastTheBurstEndTheConnection() throws {
        var configuration = HTTP2Configuration()
        configuration.resetBurst = 10
        configuration.resetsPerSecond = 1
        let pair = Pair(configuration: configuration)
        pair.handler = { _ in nil }
        for _ in 0..<50 where pair.closed == nil && pair.lingering == nil {
            let stream = pair.peer.request("GET", "/getmaps")
            pair.exchange()  // the HEADERS go out first; a reset of an unsent request would send nothing
            pair.peer.reset(stream)
            pair.exchange()
        }
        #expect(pair.handled.count <= 50)
        #expect(!pair.peer.goaways.isEmpty, "GOAWAY for the flood")
        #expect(pair.lingering == .protocolError || pair.closed == .protocolError)
    }

    @Test func aPingFloodFromAClientThatDoesNotReadClosesTheConnection() {
        var configuration = HTTP2Configuration()
        configuration.maxQueuedAcks = 20
        let pair = Pair(configuration: configuration)
        pair.exchange()
        pair.delivering = false
        for _ in 0..<100 { pair.peer.ping() }
        pair.exchange()
        #expect(pair.closed == .protocolError)
    }
}

/// HTTP/2 output measured against the rate floor once the socket is full, as `HTTP1RateFloorTests` does for
/// HTTP/1.1 responses.
@Suite struct HTTP2RateFloorTests {
    typealias Pair = HTTP2ConnectionMachineTests.Pair
    static let at = HTTP2ConnectionMachineTests.at

    /// The suite's timeouts with a floor of 100 bytes per second over 5-second windows (500 a window).
    static let timeouts: ConnectionTimeouts = {
        var timeouts = HTTP2ConnectionMachineTests.timeouts
        timeouts.minimumBytesPerSecond = 100
        timeouts.rateWindowSeconds = 5
        timeouts.sendIdleSeconds = 100
        return timeouts
    }()

    /// A pair whose client has asked for something and been answered, so the connection has output to write.
    static func answered(timeouts: ConnectionTimeouts = Self.timeouts) -> Pair {
        let pair = Pair(timeouts: timeouts)
        pair.peer.request("GET", "/")
        pair.exchange(at: Self.at(1))
        return pair
    }

    @Test func aReaderThatTakesFramesSlowerThanTheFloorIsClosedAWindowAfterTheSocketFills() {
        let pair = Self.answered()
        // The first block: what the kernel took before it does not count.
        pair.perform(pair.machine.writeBlocked(written: 80_000, at: Self.at(2)))
        #expect(pair.armed == Self.at(7))
        pair.perform(pair.machine.writeBlocked(written: 300, at: Self.at(4)))
        pair.perform(pair.machine.timerFired(at: Self.at(6)))
        #expect(pair.closed == nil, "the window is not over")
        pair.perform(pair.machine.timerFired(at: Self.at(7)))
        #expect(pair.closed == .sendStalled, "300 bytes in a 500-byte window")
    }

    @Test func bytesWrittenWhileTheQueueEmptiedAndRefilledCount() {
        let pair = Self.answered()
        pair.perform(pair.machine.writeBlocked(written: 80_000, at: Self.at(2)))
        // The socket took the whole queue; more frames were produced after it.
        pair.perform(pair.machine.outputDrained(written: 400, more: true, at: Self.at(3)))
        pair.perform(pair.machine.writeBlocked(written: 200, at: Self.at(5)))
        pair.perform(pair.machine.timerFired(at: Self.at(7)))
        #expect(pair.closed == nil, "600 bytes in a 500-byte window")
        #expect(pair.armed == Self.at(12), "the next window")
    }

    @Test func aReaderAtTheFloorKeepsItsConnectionAndDrainedOutputEndsTheWindow() {
        let pair = Self.answered()
        pair.perform(pair.machine.writeBlocked(written: 80_000, at: Self.at(2)))
        pair.perform(pair.machine.writeBlocked(written: 600, at: Self.at(6)))
        pair.perform(pair.machine.timerFired(at: Self.at(7)))
        #expect(pair.closed == nil)
        pair.perform(pair.machine.outputDrained(written: 0, more: false, at: Self.at(8)))
        pair.perform(pair.machine.timerFired(at: Self.at(12)))
        #expect(pair.closed == nil, "nothing waits to be written: no window")
    }

    @Test func aFloorOfZeroMeasuresNothing() {
        var timeouts = Self.timeouts
        timeouts.minimumBytesPerSecond = 0
        let pair = Self.answered(timeouts: timeouts)
        pair.perform(pair.machine.writeBlocked(written: 80_000, at: Self.at(2)))
        pair.perform(pair.machine.timerFired(at: Self.at(7)))
        #expect(pair.closed == nil)
        #expect(pair.armed == Self.at(61), "no window: next comes the idle deadline, before the send idle one")
    }
}
