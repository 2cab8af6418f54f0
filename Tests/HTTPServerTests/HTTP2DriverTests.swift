import CNGHTTP2
import HTTPCore
@testable import HTTPServer
import Testing

/// HTTP/2 (with prior knowledge on plain HTTP) through a whole `Connection` on fake I/O, against nghttp2's
/// client session: streams answered in any order, output that blocks and resumes around our GOAWAY, refused and
/// reset streams. No sockets, no sleeps; the clock is made up.
@Suite struct HTTP2DriverTests {
    /// Moves bytes between the client and the connection until neither has more.
    static func exchange(_ pipeline: FakePipeline, _ peer: HTTP2Peer) {
        for _ in 0..<1000 {
            let sent = peer.output()
            if !sent.isEmpty { pipeline.send(sent) }
            let received = pipeline.written()
            if !received.isEmpty { peer.receive(received) }
            if sent.isEmpty && received.isEmpty { return }
        }
    }

    @Test func streamsAreAnsweredAsTheirAnswersComeEachWithItsOwnRequestID() throws {
        let pipeline = FakePipeline()
        let peer = HTTP2Peer()
        let held = peer.request("GET", "/held")
        let quick = peer.request("GET", "/quick")
        Self.exchange(pipeline, peer)
        #expect(peer.responses[quick]?.body == Array(#""/quick""#.utf8), "answered while the other is held")
        #expect(peer.responses[held]?.status == nil)
        pipeline.answerHeld()
        Self.exchange(pipeline, peer)
        #expect(peer.responses[held]?.body == Array(#""held""#.utf8) && peer.responses[held]?.complete == true)
        #expect(peer.responses[held]?.header("x-request-id") == "test-1-1")
        #expect(peer.responses[quick]?.header("x-request-id") == "test-1-2")
        #expect(pipeline.exchanges.withLock { $0.map(\.version) } == [.http2, .http2])
    }

    @Test func dataAWindowUpdateFreesAfterOurGoawayStillLeavesAndTheConnectionLingersOnlyOnceDrained() throws {
        let pipeline = FakePipeline()
        let peer = HTTP2Peer(initialWindow: 1024, consumesData: false)
        let body = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let stream = peer.request("GET", "/held")
        Self.exchange(pipeline, peer)
        pipeline.queue.sync { pipeline.io.writeRoom = 0 }  // the socket is full
        pipeline.answerHeld(.json(.ok, body))  // HEADERS and the first 1 KiB of DATA wait in the output
        pipeline.drain()  // our GOAWAY is queued while the output is full
        #expect(pipeline.written().isEmpty)
        pipeline.makeRoom()
        Self.exchange(pipeline, peer)
        #expect(peer.goaways.first?.lastStream == stream && peer.goaways.first?.code == NGHTTP2_NO_ERROR.rawValue)
        #expect(peer.responses[stream]?.body.count == 1024, "as much as the client's window allows")
        #expect(!pipeline.isOutputShut, "its stream is not done")
        peer.allow(Int32(body.count - 1024), on: stream)  // a WINDOW_UPDATE frees the rest
        Self.exchange(pipeline, peer)
        #expect(peer.responses[stream]?.body == body && peer.responses[stream]?.complete == true)
        #expect(pipeline.isOutputShut && !pipeline.isClosed, "everything written: lingering for the client to close")
        pipeline.closeClient()
        #expect(pipeline.isClosed)
        #expect(pipeline.statistics.connectionsClosed == [.shutdown: 1])
        #expect(pipeline.statistics.goawaysSent == ["NO_ERROR": 1])
    }

    @Test func aRefusedStreamIsAnsweredAndReportedAsAnUnreadableRequest() throws {
        let pipeline = FakePipeline { $0.limits.maxBodyBytes = 100 }
        let peer = HTTP2Peer()
        let refused = peer.request("POST", "/postmaps", headers: [("content-length", "500")], body: Array(repeating: 1, count: 500))
        let fine = peer.request("GET", "/fine")
        Self.exchange(pipeline, peer)
        #expect(peer.responses[refused]?.status == 413 && peer.responses[refused]?.resetCode == NGHTTP2_NO_ERROR.rawValue)
        #expect(peer.responses[fine]?.status == 200)
        let reported = pipeline.exchanges.withLock { $0 }
        #expect(reported.count == 2)
        #expect(reported.contains { $0.request == nil && $0.response.status == .contentTooLarge && $0.bodyBytes > 0 })
        #expect(!pipeline.isClosed)
    }

    @Test func anAnswerForAStreamTheClientResetIsReportedButNotSent() throws {
        let pipeline = FakePipeline()
        let peer = HTTP2Peer()
        let stream = peer.request("GET", "/held")
        Self.exchange(pipeline, peer)
        peer.reset(stream)
        Self.exchange(pipeline, peer)
        #expect(pipeline.statistics.openHTTP2Streams == 0)
        pipeline.answerHeld()
        Self.exchange(pipeline, peer)
        #expect(peer.responses[stream]?.status == nil)
        #expect(pipeline.exchanges.withLock { $0.map(\.response.status) } == [.ok])
        #expect(pipeline.queue.sync { pipeline.connection.standing(at: FakePipeline.at(5)) } != nil, "nothing held")
    }

    @Test func anIdleConnectionGetsGoawayAtTheKeepAliveDeadlineAndClosesAsIdle() throws {
        let pipeline = FakePipeline()
        let peer = HTTP2Peer()
        peer.request("GET", "/")
        Self.exchange(pipeline, peer)
        pipeline.fireTimer(at: 10)
        pipeline.fireTimer(at: 60)
        Self.exchange(pipeline, peer)
        #expect(peer.goaways.map(\.code) == [NGHTTP2_NO_ERROR.rawValue])
        #expect(pipeline.isOutputShut)
        pipeline.fireTimer(at: 65)
        #expect(pipeline.statistics.connectionsClosed == [.idle: 1], "the linger deadline")
    }
}
