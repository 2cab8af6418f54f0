import CNGHTTP2
import HTTPCore
@testable import HTTPServer
import Testing

/// Responses whose body is pulled from a stream while they last (server-sent events), over HTTP/1.1 and HTTP/2,
/// through a whole `Connection` on fake I/O with a made-up clock.
@Suite struct StreamedResponseTests {
    static let request = "GET /held HTTP/1.1\r\nHost: x\r\n\r\n"

    static func streamed(_ stream: ScriptedStream) -> HTTPResponse {
        var response = HTTPResponse(status: .ok, headers: HTTPHeaders([("Content-Type", "text/event-stream")]))
        response.stream = stream
        return response
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// An HTTP/1.1 pipeline with a stream answering its first request, and the head already read.
    static func http1Stream() -> (FakePipeline, ScriptedStream, head: String) {
        let pipeline = FakePipeline { $0.tls = nil; $0.http2.enabled = false }
        let stream = ScriptedStream()
        pipeline.send(request)
        pipeline.answerHeld(streamed(stream))
        return (pipeline, stream, text(pipeline.written()))
    }

    @Test func http1SendsEachEventAsAChunkWhenItComesAndNoDeadlineEndsAQuietStream() {
        let (pipeline, stream, head) = Self.http1Stream()
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(head.contains("Transfer-Encoding: chunked\r\n") && !head.contains("Content-Length"))
        #expect(head.contains("Connection: close\r\n"), "nothing can follow a stream on its connection")
        #expect(stream.isOpened)
        stream.push("id: 1\ndata: a\n\n")
        pipeline.queue.sync {}
        #expect(Self.text(pipeline.written()) == "f\r\nid: 1\ndata: a\n\n\r\n")
        // An hour later: no keep-alive, request or send deadline applies to a stream that waits for events.
        pipeline.fireTimer(at: 3_600)
        #expect(!pipeline.isClosed)
        stream.push(":\n")
        pipeline.queue.sync {}
        #expect(Self.text(pipeline.written()) == "2\r\n:\n\r\n")
    }

    @Test func http1DrainingEndsTheStreamAfterItsLastWholeEventThenLingers() {
        let (pipeline, stream, _) = Self.http1Stream()
        stream.push("id: 1\ndata: a\n\n")
        pipeline.queue.sync {}
        _ = pipeline.written()
        pipeline.drain()
        #expect(Self.text(pipeline.written()) == "0\r\n\r\n")
        #expect(stream.isClosed)
        #expect(pipeline.isOutputShut && !pipeline.isClosed)
        pipeline.closeClient()
        #expect(pipeline.statistics.connectionsClosed == [.shutdown: 1])
    }

    @Test func http1StreamThatEndsSendsTheLastChunkAndACutOneClosesAtOnce() {
        let (ended, endedStream, _) = Self.http1Stream()
        endedStream.push("event: reset\ndata: {}\n\n")
        endedStream.finish(.ended)
        ended.queue.sync {}
        #expect(Self.text(ended.written()).hasSuffix("\r\n0\r\n\r\n"))
        #expect(ended.isOutputShut)

        let (cut, cutStream, _) = Self.http1Stream()
        cutStream.finish(.cut)
        cut.queue.sync {}
        #expect(cut.isClosed && cutStream.isClosed)
        #expect(cut.statistics.connectionsClosed == [.sendStalled: 1])
    }

    @Test func http1StreamBlockedOnAFullSocketIsHeldToTheSendDeadlineAndMayBeShed() {
        let (pipeline, stream, _) = Self.http1Stream()
        #expect(pipeline.queue.sync { pipeline.connection.standing(at: FakePipeline.at(100)) } == nil)
        pipeline.queue.sync { pipeline.io.writeRoom = 0 }
        stream.push("id: 1\ndata: a\n\n")
        pipeline.queue.sync {}
        #expect(pipeline.queue.sync { pipeline.connection.standing(at: FakePipeline.at(100)) } != nil)
        pipeline.fireTimer(at: 3_600)
        #expect(pipeline.isClosed)
        #expect(pipeline.statistics.connectionsClosed == [.sendStalled: 1])
    }

    @Test func aClosedConnectionLetsGoOfItsStream() {
        let (pipeline, stream, _) = Self.http1Stream()
        pipeline.queue.sync { pipeline.connection.close(.shed) }
        #expect(stream.isClosed)
    }

    @Test func headGetsTheHeadAndTheStreamIsNeverOpened() {
        let pipeline = FakePipeline { $0.tls = nil; $0.http2.enabled = false }
        let stream = ScriptedStream()
        pipeline.send("HEAD /held HTTP/1.1\r\nHost: x\r\n\r\n")
        pipeline.answerHeld(Self.streamed(stream))
        #expect(Self.text(pipeline.written()).hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(!stream.isOpened)
        #expect(!pipeline.isClosed, "a HEAD answer keeps the connection")
    }

    /// An HTTP/2 connection with a stream answering its first request, and the response's HEADERS received.
    static func http2Stream(peer: HTTP2Peer = HTTP2Peer()) -> (FakePipeline, HTTP2Peer, Int32, ScriptedStream) {
        let pipeline = FakePipeline()
        let streamID = peer.request("GET", "/held")
        HTTP2DriverTests.exchange(pipeline, peer)
        let stream = ScriptedStream()
        pipeline.answerHeld(streamed(stream))
        HTTP2DriverTests.exchange(pipeline, peer)
        return (pipeline, peer, streamID, stream)
    }

    @Test func http2SendsEventsAsDataFramesOnItsStreamAndEndsItCleanlyWhenDraining() throws {
        let (pipeline, peer, streamID, stream) = Self.http2Stream()
        #expect(peer.responses[streamID]?.status == 200 && peer.responses[streamID]?.complete != true)
        stream.push("id: 1\ndata: a\n\n")
        pipeline.queue.sync {}
        HTTP2DriverTests.exchange(pipeline, peer)
        #expect(peer.responses[streamID]?.body == Array("id: 1\ndata: a\n\n".utf8))
        // Another stream on the connection is answered while this one waits.
        let other = peer.request("GET", "/quick")
        HTTP2DriverTests.exchange(pipeline, peer)
        #expect(peer.responses[other]?.complete == true)
        pipeline.fireTimer(at: 3_600)
        HTTP2DriverTests.exchange(pipeline, peer)
        #expect(peer.goaways.isEmpty, "an open stream keeps its connection from the idle deadline")
        stream.push(":\n")
        pipeline.drain()
        HTTP2DriverTests.exchange(pipeline, peer)
        #expect(peer.responses[streamID]?.body == Array("id: 1\ndata: a\n\n:\n".utf8))
        #expect(peer.responses[streamID]?.complete == true, "END_STREAM after the last whole event")
        #expect(stream.isClosed)
    }

    @Test func http2StreamThatIsCutIsResetWithCancel() throws {
        let (pipeline, peer, streamID, stream) = Self.http2Stream()
        Self.expectCut(pipeline, peer, streamID, stream)
    }

    /// Cuts `stream` and expects its HTTP/2 stream, and only it, reset with CANCEL.
    static func expectCut(_ pipeline: FakePipeline, _ peer: HTTP2Peer, _ streamID: Int32, _ stream: ScriptedStream) {
        stream.finish(.cut)
        pipeline.queue.sync {}
        HTTP2DriverTests.exchange(pipeline, peer)
        #expect(peer.responses[streamID]?.resetCode == NGHTTP2_CANCEL.rawValue)
        #expect(stream.isClosed)
        #expect(!pipeline.isClosed, "only the stream goes")
    }

    /// A client whose window shut with part of an event sent: the rest waits in the stream's record, nghttp2 asks
    /// for no more data, and the cut must still be found when the stream wakes (not only at the send deadline).
    @Test func http2StreamCutWhileItsWindowHoldsAnEventBackIsResetWithCancel() throws {
        let peer = HTTP2Peer(initialWindow: 4, consumesData: false)
        let (pipeline, _, streamID, stream) = Self.http2Stream(peer: peer)
        stream.push("id: 1\ndata: a\n\n")
        pipeline.queue.sync {}
        HTTP2DriverTests.exchange(pipeline, peer)
        #expect(peer.responses[streamID]?.body == Array("id: ".utf8), "the window lets four bytes through")
        Self.expectCut(pipeline, peer, streamID, stream)
    }
}
