import HTTPCore
@testable import HTTPServer
import Testing

/// A response body's one state through its transitions: fixed bytes in frames, live pieces pulled when the one
/// before is sent, the end, a cut, and draining.
@Suite struct HTTP2ResponseBodyTests {
    @Test func aFixedBodyGoesInFramesAndTheLastEndsTheStream() {
        var body = HTTP2ResponseBody(HTTPBody(Array("0123456789".utf8)))
        #expect(body.frame(limit: 4) == .data(count: 4, isLast: false))
        body.handle(.sent(4))
        #expect(body.unsent == 6)
        #expect(body.frame(limit: 100) == .data(count: 6, isLast: true))
        body.handle(.sent(6))
        #expect(body.unsent == 0 && body.frame(limit: 100) == .none)
    }

    @Test func anEmptyBodyHasNoFrame() {
        let body = HTTP2ResponseBody(HTTPBody())
        #expect(body.frame(limit: 100) == .none && !body.isLive)
    }

    @Test func aLiveBodyIsPulledOnlyOnceItsPieceIsSent() {
        let source = ScriptedStream()
        source.push("first")
        source.push("second")
        var body = HTTP2ResponseBody(HTTPBody(Array("head".utf8)), live: source)
        body.handle(.frameWanted(limit: 100))
        #expect(body.frame(limit: 100) == .data(count: 4, isLast: false), "what the response began with goes first")
        body.handle(.sent(4))
        #expect(body.unsent == 0)
        body.handle(.frameWanted(limit: 100))
        #expect(body.frame(limit: 100) == .data(count: 5, isLast: false))
        body.handle(.frameWanted(limit: 100))
        #expect(body.unsent == 5, "a piece still unsent is not replaced by the next")
        body.handle(.sent(5))
        body.handle(.frameWanted(limit: 100))
        #expect(body.unsent == 6)
        body.handle(.sent(6))
        body.handle(.frameWanted(limit: 100))
        #expect(body.frame(limit: 100) == .wait, "nothing more yet")
        source.finish(.ended)
        body.handle(.frameWanted(limit: 100))
        #expect(body.frame(limit: 100) == .end && !body.isLive)
    }

    @Test func aCutBodyIsClosedAndDropsWhatItHeld() {
        let source = ScriptedStream()
        var body = HTTP2ResponseBody(HTTPBody(Array("held".utf8)), live: source)
        source.finish(.cut)
        body.handle(.woke)
        #expect(body.isCut && source.isClosed && body.unsent == 0)
        #expect(body.frame(limit: 100) == .wait)
        body.handle(.sent(1))
        #expect(body.isCut, "nothing moves a cut body but dropping it")
        body.handle(.drop)
        #expect(!body.isCut && body.frame(limit: 100) == .none)
    }

    @Test func aLiveBodyThatWakesUncutKeepsItsPiece() {
        let source = ScriptedStream()
        var body = HTTP2ResponseBody(HTTPBody(Array("held".utf8)), live: source)
        body.handle(.woke)
        #expect(body.isLive && body.unsent == 4 && !source.isClosed)
    }

    @Test func drainingEndsALiveBodyAfterWhatItGave() {
        let source = ScriptedStream()
        var body = HTTP2ResponseBody(HTTPBody(Array("event".utf8)), live: source)
        body.handle(.sent(2))
        body.handle(.finish)
        #expect(source.isClosed && !body.isLive)
        #expect(body.frame(limit: 100) == .data(count: 3, isLast: true), "the rest of its piece ends the stream")
        var idle = HTTP2ResponseBody(HTTPBody(), live: ScriptedStream())
        idle.handle(.finish)
        #expect(idle.frame(limit: 100) == .end, "with nothing unsent, an empty frame ends it")
    }

    @Test func droppingALiveBodyClosesItsSource() {
        let source = ScriptedStream()
        var body = HTTP2ResponseBody(HTTPBody(Array("x".utf8)), live: source)
        body.handle(.drop)
        #expect(source.isClosed && body.unsent == 0 && body.frame(limit: 100) == .none)
    }
}
