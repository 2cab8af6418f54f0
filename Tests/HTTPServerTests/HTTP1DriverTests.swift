import HTTPCore
@testable import HTTPServer
import Testing

/// HTTP/1.1 through a whole `Connection` on fake I/O: requests handed out and answered, output that blocks and
/// resumes, endings and their reasons. No sockets, no sleeps; the clock is made up.
@Suite struct HTTP1DriverTests {
    static let get = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"

    /// The responses in `bytes`, as status lines and bodies (every body here is short JSON with a length).
    static func responses(_ bytes: [UInt8]) -> [(status: String, body: String)] {
        var text = Substring(String(decoding: bytes, as: UTF8.self))
        var found: [(String, String)] = []
        while let headEnd = text.range(of: "\r\n\r\n") {
            let head = text[..<headEnd.lowerBound]
            let status = String(head.prefix { $0 != "\r\n" })
            let length = head.split(separator: "\r\n").first { $0.hasPrefix("Content-Length: ") }
                .flatMap { Int($0.dropFirst("Content-Length: ".count)) } ?? 0
            let rest = text[headEnd.upperBound...]
            let bodyLength = status.contains(" 304 ") ? 0 : min(length, rest.utf8.count)
            found.append((status, String(rest.prefix(bodyLength))))
            text = rest.dropFirst(bodyLength)
        }
        return found
    }

    @Test func pipelinedRequestsAreAnsweredInOrderWhateverAnswersFirst() {
        let pipeline = FakePipeline { $0.tls = nil; $0.http2.enabled = false }
        pipeline.send("GET /held-1 HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /held-2 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(pipeline.written().isEmpty, "the first is with the handler")
        pipeline.answerHeld()
        #expect(Self.responses(pipeline.written()).map(\.body) == [#""held""#, #""/b""#])
        pipeline.answerHeld(.json(.ok, Array("\"second held\"".utf8)))
        #expect(Self.responses(pipeline.written()).map(\.body) == [#""second held""#])
        #expect(pipeline.exchanges.withLock { $0.map(\.requestID) } == ["test-1-1", "test-1-2", "test-1-3"])
        #expect(!pipeline.isClosed)
    }

    @Test func aClientThatKeepsSendingIsReadAFewTimesATurnAndTheRestInTurnsTheConnectionQueuesItself() {
        let pipeline = FakePipeline { $0.tls = nil; $0.http2.enabled = false }
        let count = 3 * Connection.readsPerTurn + 1
        let unread = pipeline.queue.sync {
            for _ in 0..<count { pipeline.io.input.append(Array(Self.get.utf8)) }
            pipeline.connection.socketReadable()
            return pipeline.io.input.count
        }
        #expect(unread == count - Connection.readsPerTurn, "one turn reads readsPerTurn times, then steps aside")
        // No readiness event comes again (edge-triggered): each turn queues the next behind the queue's other work,
        // so every wait on the queue lets at least one more turn run.
        var waits = 0
        while waits < count, pipeline.queue.sync(execute: { !pipeline.io.input.isEmpty }) { waits += 1 }
        #expect(pipeline.queue.sync { pipeline.io.input.isEmpty })
        #expect(Self.responses(pipeline.written()).count == count)
        #expect(!pipeline.isClosed)
    }

    @Test func aResponseThatFillsTheSocketGoesOnWhenItIsWritableAndTheNextRequestWaits() {
        let pipeline = FakePipeline()  // plain HTTP with HTTP/2 on: the first bytes are sniffed, then HTTP/1.1
        pipeline.queue.sync { pipeline.io.writeRoom = 10 }
        pipeline.send(Self.get + Self.get)
        let first = pipeline.written()
        #expect(first.count == 10, "the socket took 10 bytes")
        #expect(pipeline.exchanges.withLock { $0.count } == 1, "the second request waits for the first answer")
        pipeline.makeRoom()
        #expect(Self.responses(first + pipeline.written()).map(\.body) == [#""/a""#, #""/a""#])
        #expect(pipeline.exchanges.withLock { $0.map(\.version) } == [.http1_1, .http1_1])
    }

    @Test func aBodyOfSegmentsLeavesWholeAndInOrderThroughASocketThatTakesLittleAtATime() {
        let text = Array(String(repeating: "abcdefghi,", count: 4_000).utf8)
        let sizes = [30_000, 1, 5, 4_000, 2_994, 3_000]
        var segments: [ArraySlice<UInt8>] = []
        for size in sizes { segments.append(text[segments.reduce(0) { $0 + $1.count }...].prefix(size)) }
        let body = HTTPBody(segments: segments)
        let pipeline = FakePipeline { $0.tls = nil; $0.http2.enabled = false }
        pipeline.send("GET /held HTTP/1.1\r\nHost: x\r\n\r\n" + Self.get)
        pipeline.queue.sync { pipeline.io.writeRoom = 1_000 }
        pipeline.answerHeld(HTTPResponse(status: .ok, body: body))
        var written = pipeline.written()
        #expect(written.count == 1_000)
        for _ in 0..<6 {
            pipeline.makeRoom(7_777)
            written += pipeline.written()
        }
        let responses = Self.responses(written)
        #expect(responses.map(\.body) == [String(decoding: text, as: UTF8.self), #""/a""#])
    }

    @Test func aWriteThatMakesNoProgressEndsTheConnectionAtTheSendDeadline() {
        let pipeline = FakePipeline { $0.tls = nil; $0.http2.enabled = false; $0.timeouts.minimumBytesPerSecond = 0 }
        pipeline.queue.sync { pipeline.io.writeRoom = 0 }
        pipeline.send(Self.get)
        #expect(pipeline.armed == FakePipeline.at(10), "the first request's header deadline, armed first")
        pipeline.fireTimer(at: 10)
        #expect(pipeline.armed == FakePipeline.at(30), "then the send idle deadline")
        pipeline.fireTimer(at: 29)
        #expect(!pipeline.isClosed)
        pipeline.fireTimer(at: 30)
        #expect(pipeline.isClosed)
        #expect(pipeline.isAborted, "reset: what the kernel holds for a peer that reads nothing is dropped")
        #expect(pipeline.statistics.connectionsClosed == [.sendStalled: 1])
    }

    @Test func aMalformedRequestIsAnsweredThenTheConnectionLingersAndClosesForThatReason() {
        let pipeline = FakePipeline { $0.tls = nil; $0.http2.enabled = false }
        pipeline.send("GET / HTTP/1.1\r\nBad Header: 1\r\n\r\nGET /b HTTP/1.1\r\n\r\n")
        let responses = Self.responses(pipeline.written())
        #expect(responses.map(\.status) == ["HTTP/1.1 400 Bad Request"])
        #expect(pipeline.isOutputShut && !pipeline.isClosed, "lingering: our side shut, input dropped")
        #expect(pipeline.exchanges.withLock { $0.first?.request == nil && $0.first?.requestID == "test-1-1" })
        pipeline.closeClient()
        #expect(pipeline.isClosed && !pipeline.isAborted, "an orderly close: the answer was sent")
        #expect(pipeline.statistics.connectionsClosed == [.requestError: 1])
    }

    @Test func anAnswerAfterTheConnectionClosedIsReportedButNotSent() {
        let pipeline = FakePipeline { $0.tls = nil; $0.http2.enabled = false }
        pipeline.send("GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
        pipeline.queue.sync { pipeline.connection.close(.shutdown) }
        pipeline.answerHeld()
        #expect(pipeline.written().isEmpty)
        #expect(pipeline.exchanges.withLock { $0.map(\.response.status) } == [.ok])
    }

    @Test func theConnectionClosesForTheReasonItLingered() {
        let served = FakePipeline { $0.tls = nil; $0.http2.enabled = false; $0.maxRequestsPerConnection = 1 }
        served.send(Self.get)
        #expect(served.isOutputShut)
        served.fireTimer(at: 5)
        #expect(served.statistics.connectionsClosed == [.served: 1], "the linger deadline")
        let idle = FakePipeline { $0.tls = nil; $0.http2.enabled = false }
        idle.fireTimer(at: 10)
        #expect(idle.statistics.connectionsClosed == [.idle: 1], "no request came in time")
    }
}
