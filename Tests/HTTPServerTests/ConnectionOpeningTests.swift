import HTTPCore
@testable import HTTPServer
import Testing

/// The opening steps on a made-up clock: PROXY header, TLS handshake, and the first bytes that choose the protocol
/// on plain HTTP. No sockets, no sleeps.
@Suite struct ConnectionOpeningTests {
    static let timeouts: ConnectionTimeouts = {
        var timeouts = ConnectionTimeouts()
        timeouts.handshakeSeconds = 10
        timeouts.headerSeconds = 7
        return timeouts
    }()

    static func at(_ seconds: Double) -> Instant { Instant(nanoseconds: 1_000_000_000_000) + seconds }

    static func opening(proxied: Bool = false, sniffing: Bool = false) -> ConnectionOpening {
        ConnectionOpening(at: at(0), proxied: proxied, sniffsPlainHTTP: sniffing, timeouts: timeouts)
    }

    @Test func aTLSHandshakeChoosesTheProtocolByALPN() {
        var opening = Self.opening()
        #expect(opening.start() == ConnectionOpening.Step(armTimer: Self.at(10)), "the handshake deadline")
        #expect(opening.handshakeStepped(.wantRead, http2: false, at: Self.at(1)) == ConnectionOpening.Step())
        #expect(opening.phase == .handshake)
        #expect(opening.handshakeStepped(.done(0), http2: true, at: Self.at(2)).advanced)
        #expect(opening.phase == .open(http2: true))
        var http1 = Self.opening()
        _ = http1.handshakeStepped(.done(0), http2: false, at: Self.at(2))
        #expect(http1.phase == .open(http2: false))
    }

    @Test func aHandshakeThatFailsOrDoesNotFinishInTimeCloses() {
        var failed = Self.opening()
        _ = failed.handshakeStepped(.failed, http2: false, at: Self.at(1))
        #expect(failed.phase == .closed(.handshake))
        var slow = Self.opening()
        #expect(slow.timerFired(at: Self.at(9.9)) == ConnectionOpening.Step(armTimer: Self.at(10)), "early: armed again")
        #expect(slow.timerFired(at: Self.at(10)).advanced)
        #expect(slow.phase == .closed(.handshake))
    }

    @Test func aProxyHeaderComesBeforeTheHandshakeAndCountsAgainstItsDeadline() {
        var opening = Self.opening(proxied: true)
        #expect(opening.phase == .proxyHeader)
        #expect(opening.proxyHeaderRead(.incomplete, admitted: true) == ConnectionOpening.Step())
        #expect(opening.proxyHeaderRead(.header(client: nil, port: nil), admitted: true).advanced)
        #expect(opening.phase == .handshake)
        var absent = Self.opening(proxied: true)
        _ = absent.proxyHeaderRead(.absent, admitted: true)
        #expect(absent.phase == .handshake, "a proxy that sends none forwards clients per request")
        var stalled = Self.opening(proxied: true)
        _ = stalled.timerFired(at: Self.at(10))
        #expect(stalled.phase == .closed(.handshake))
    }

    @Test func aMalformedProxyHeaderOrAClientOverItsShareCloses() {
        var malformed = Self.opening(proxied: true)
        _ = malformed.proxyHeaderRead(.unusable, admitted: true)
        #expect(malformed.phase == .closed(.handshake))
        var overShare = Self.opening(proxied: true)
        _ = overShare.proxyHeaderRead(.header(client: IPAddress("198.18.0.1"), port: 1), admitted: false)
        #expect(overShare.phase == .closed(.clientLimit))
    }

    @Test func plainHTTPReadsUntilTheBytesMatchTheHTTP2PrefaceOrStopMatchingIt() {
        var opening = Self.opening(sniffing: true)
        #expect(opening.handshakeStepped(.done(0), http2: false, at: Self.at(3)) == ConnectionOpening.Step(
            armTimer: Self.at(10), advanced: true), "the header deadline from the end of the handshake")
        #expect(opening.phase == .sniffing)
        let preface = HTTP2ConnectionMachine.preface
        #expect(Array(preface.prefix(5)).withUnsafeBytes { opening.sniffed($0) } == ConnectionOpening.Step())
        #expect(Array(preface.dropFirst(5)).withUnsafeBytes { opening.sniffed($0) }.advanced)
        #expect(opening.phase == .open(http2: true) && opening.sniffed == preface)
        var http1 = Self.opening(sniffing: true)
        _ = http1.handshakeStepped(.done(0), http2: false, at: Self.at(0))
        _ = Array("PRI / HTTP/1.1".utf8).withUnsafeBytes { http1.sniffed($0) }
        #expect(http1.phase == .open(http2: false), "no longer the preface: HTTP/1.1, with what was read")
        #expect(http1.sniffed == Array("PRI / HTTP/1.1".utf8))
    }

    @Test func aPlainConnectionThatSendsNothingClosesAsIdleAtTheHeaderDeadline() {
        var opening = Self.opening(sniffing: true)
        _ = opening.handshakeStepped(.done(0), http2: false, at: Self.at(1))
        #expect(opening.timerFired(at: Self.at(7.9)) == ConnectionOpening.Step(armTimer: Self.at(8)))
        _ = opening.timerFired(at: Self.at(8))
        #expect(opening.phase == .closed(.idle))
        var gone = Self.opening(sniffing: true)
        _ = gone.handshakeStepped(.done(0), http2: false, at: Self.at(1))
        _ = gone.peerClosed()
        #expect(gone.phase == .closed(.clientClosed))
    }

    @Test func anOpeningConnectionMayBeShedOnceIdleForTheGrace() {
        let opening = Self.opening()
        #expect(opening.standing(at: Self.at(0.5), timeouts: Self.timeouts) == nil)
        #expect(opening.standing(at: Self.at(2), timeouts: Self.timeouts) == ConnectionStanding(bytesPerSecond: 0, since: Self.at(0)))
    }
}
