import COpenSSL
import Foundation
import HTTPServer
import Testing

/// Loopback behaviour of connections over plain TCP: keep-alive, pipelining, errors, deadlines, caps.
@Suite struct ConnectionTests {
    @Test func answersPipelinedRequestsInOrderOnOneConnection() throws {
        let harness = try ServerHarness()
        defer { harness.stop() }
        let client = try TestClient(port: harness.port)
        client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\n")
        for path in ["/a", "/b", "/c"] {
            let response = try #require(client.readResponse())
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "\"\(path) 0\"")
            #expect(response.header("Connection") == nil)
            #expect(response.header("Date") != nil)
        }
    }

    @Test func inlineAndHandlerThreadResponsesKeepPipelineOrder() throws {
        let harness = try ServerHarness()
        defer { harness.stop() }
        let client = try TestClient(port: harness.port)
        client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /inline HTTP/1.1\r\nHost: x\r\n\r\n")
        // /inline, which would be answered at once, waits behind /slow at the handler.
        try #require(harness.slow.waitForArrival())
        harness.slow.release()
        #expect(client.readResponse().map { String(decoding: $0.body, as: UTF8.self) } == "\"/slow 0\"")
        #expect(client.readResponse().map { String(decoding: $0.body, as: UTF8.self) } == "\"/inline 0\"")
    }

    @Test func notModifiedSendsItsHeadOnlyAndTheNextPipelinedResponseFollows() throws {
        let harness = try ServerHarness()
        defer { harness.stop() }
        let client = try TestClient(port: harness.port)
        client.send("GET /not-modified HTTP/1.1\r\nHost: x\r\n\r\nGET /inline HTTP/1.1\r\nHost: x\r\n\r\n")
        let notModified = try #require(client.readResponse(bodyless: true))
        #expect(notModified.status == 304)
        #expect(notModified.header("Content-Length") == "10")
        // Had the 304 carried its body, these bytes would be "never sent" instead of the next response.
        let next = try #require(client.readResponse())
        #expect(next.status == 200)
        #expect(String(decoding: next.body, as: UTF8.self) == "\"/inline 0\"")
    }

    @Test func malformedRequestGets400WithConnectionCloseAndIsNotFollowedByLeftovers() throws {
        let harness = try ServerHarness()
        defer { harness.stop() }
        let client = try TestClient(port: harness.port)
        client.send("GET /a HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try #require(client.readResponse())
        #expect(response.status == 400)
        #expect(response.header("Connection") == "close")
        #expect(response.header("Content-Type") == "application/json")
        #expect(client.isClosedByServer())
    }

    @Test func oversizedBodyIsRefusedBeforeItIsSent() throws {
        let harness = try ServerHarness()
        defer { harness.stop() }
        let client = try TestClient(port: harness.port)
        client.send("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n")
        let response = try #require(client.readResponse())
        #expect(response.status == 413)
        #expect(response.header("Connection") == "close")
    }

    @Test func expectContinueGetsInterimResponseThenFinal() throws {
        let harness = try ServerHarness()
        defer { harness.stop() }
        let client = try TestClient(port: harness.port)
        client.send("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
        let interim = try #require(client.readResponse())
        #expect(interim.status == 100)
        client.send("abc")
        let final = try #require(client.readResponse())
        #expect(final.status == 200)
        #expect(String(decoding: final.body, as: UTF8.self) == "\"/p 3\"")
    }

    @Test func headOmitsTheBodyButKeepsItsLength() throws {
        let harness = try ServerHarness()
        defer { harness.stop() }
        let client = try TestClient(port: harness.port)
        client.send("HEAD /abc HTTP/1.1\r\nHost: x\r\n\r\nGET /z HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try #require(client.readResponse(bodyless: true))
        #expect(head.header("Content-Length") == "8")
        let next = try #require(client.readResponse())
        #expect(String(decoding: next.body, as: UTF8.self) == "\"/z 0\"")
    }

    @Test func http10ClosesUnlessKeepAliveIsAsked() throws {
        let harness = try ServerHarness()
        defer { harness.stop() }
        let plain = try TestClient(port: harness.port)
        plain.send("GET / HTTP/1.0\r\n\r\n")
        #expect(try #require(plain.readResponse()).header("Connection") == "close")
        #expect(plain.isClosedByServer())
        let kept = try TestClient(port: harness.port)
        kept.send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try #require(kept.readResponse()).header("Connection") == "keep-alive")
        kept.send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try #require(kept.readResponse()).status == 200)
    }

    @Test func closesAfterTheRequestCap() throws {
        let harness = try ServerHarness { $0.maxRequestsPerConnection = 2 }
        defer { harness.stop() }
        let client = try TestClient(port: harness.port)
        client.send("GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\nGET /3 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try #require(client.readResponse()).header("Connection") == nil)
        #expect(try #require(client.readResponse()).header("Connection") == "close")
        #expect(client.isClosedByServer())
    }

    @Test func incompleteHeadIsAnswered408AtTheHeaderDeadline() throws {
        let harness = try ServerHarness { $0.timeouts.headerSeconds = 0.3 }
        defer { harness.stop() }
        let client = try TestClient(port: harness.port)
        client.send("GET / HTTP/1.1\r\nHost: x\r\n")
        let response = try #require(client.readResponse())
        #expect(response.status == 408)
        #expect(client.isClosedByServer())
    }

    @Test func aSilentPlainConnectionIsClosedAtTheHeaderDeadlineNotTheHandshakeOne() throws {
        // Regression: while the first bytes had not told HTTP/1.1 from HTTP/2 (h2c), only the handshake deadline
        // applied, so silent connections held their slots that much longer.
        let harness = try ServerHarness {
            $0.timeouts.headerSeconds = 0.3
            $0.timeouts.handshakeSeconds = 3600
        }
        defer { harness.stop() }
        let silent = try TestClient(port: harness.port)
        #expect(silent.isClosedByServer())
        let partialPreface = try TestClient(port: harness.port)
        partialPreface.send("PRI * HTTP/2.0\r\n")
        #expect(partialPreface.isClosedByServer())
    }

    @Test func idleKeepAliveConnectionIsClosed() throws {
        let harness = try ServerHarness { $0.timeouts.keepAliveIdleSeconds = 0.3 }
        defer { harness.stop() }
        let client = try TestClient(port: harness.port)
        client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try #require(client.readResponse()).status == 200)
        #expect(client.isClosedByServer())
    }

    @Test func connectionsPastTheCapWaitUntilOneCloses() throws {
        let harness = try ServerHarness { $0.maxConnections = 1 }
        defer { harness.stop() }
        var first: TestClient? = try TestClient(port: harness.port)
        first?.send("GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(first?.readResponse()?.status == 200)
        let second = try TestClient(port: harness.port)
        second.send("GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
        first = nil  // closing the first lets the second in
        let response = try #require(second.readResponse())
        #expect(String(decoding: response.body, as: UTF8.self) == "\"/second 0\"")
    }

    @Test func anIdleConnectionAtTheCapGivesItsSlotToAWaitingClient() throws {
        let harness = try ServerHarness {
            $0.maxConnections = 1
            $0.timeouts.sheddableAfterSeconds = 0
        }
        defer { harness.stop() }
        let idle = try TestClient(port: harness.port)
        idle.send("GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(idle.readResponse()?.status == 200)
        // The first is kept alive for 60 s: only shedding it answers this one within the client's 5 s.
        let waiting = try TestClient(port: harness.port)
        waiting.send("GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(waiting.readResponse()?.status == 200)
        #expect(idle.isClosedByServer())
        #expect(harness.statistics.connectionsShed == 1)
    }

    @Test func aConnectionWhoseRequestIsAtTheHandlerKeepsItsSlotAtTheCap() throws {
        let harness = try ServerHarness {
            $0.maxConnections = 1
            $0.timeouts.sheddableAfterSeconds = 0
        }
        defer { harness.stop() }
        let busy = try TestClient(port: harness.port)
        busy.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        try #require(harness.slow.waitForArrival())
        let waiting = try TestClient(port: harness.port)
        waiting.send("GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
        // Past several of the acceptor's looks for room (every 250 ms) with the request still at the handler.
        #expect(!waiting.hasResponse(within: 0.6), "answered while the only slot's request was with the handler")
        harness.slow.release()
        let answered = try #require(busy.readResponse(), "not shed while its request was with the handler")
        #expect(String(decoding: answered.body, as: UTF8.self) == "\"/slow 0\"")
        #expect(waiting.readResponse()?.status == 200, "then shed once idle")
    }

    @Test func shutdownLetsTheRequestInFlightFinish() throws {
        let harness = try ServerHarness()
        let client = try TestClient(port: harness.port)
        client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        try #require(harness.slow.waitForArrival())
        let stopped = DispatchSemaphore(value: 0)
        harness.server.shutdown(deadlineSeconds: 5) { stopped.signal() }
        // The listener closes after the connections are told to drain, so once it refuses, the answer comes later.
        var refused = false
        for _ in 0..<500 where !refused {
            refused = (try? TestClient(port: harness.port)) == nil
            if !refused { usleep(10_000) }
        }
        try #require(refused, "the listener stayed open")
        harness.slow.release()
        let response = try #require(client.readResponse())
        #expect(response.status == 200)
        #expect(response.header("Connection") == "close")
        #expect(stopped.wait(timeout: .now() + 10) == .success)
        #expect(throws: TestClient.Failure.self) { try TestClient(port: harness.port) }
    }

    @Test func requestsThatKeepArrivingWhileAnswersGoOutDoNotDeepenTheStack() throws {
        // Each answer is made at once on the I/O queue, and more requests are waiting when it is written: a
        // read started from inside the read loop that handed the last request out nested once per read, with
        // its 16 KiB buffer, until the stack overflowed (a segfault under wrk). Requests of 8 KiB make a read
        // hold only two, so 2 000 of them would nest about a thousand deep.
        let harness = try ServerHarness { $0.maxRequestsPerConnection = 100_000 }
        defer { harness.stop() }
        let client = try TestClient(port: harness.port)
        let request = Array("GET /inline HTTP/1.1\r\nHost: x\r\nX-Pad: \(String(repeating: "p", count: 8000))\r\n\r\n".utf8)
        let count = 2_000
        // Only the sender writes, only this thread reads: the socket takes both at once.
        nonisolated(unsafe) let writer = client
        let sender = Thread { for _ in 0..<count { writer.send(request) } }
        sender.start()
        for index in 0..<count {
            guard client.readResponse()?.status == 200 else {
                Issue.record("request \(index) was not answered")
                return
            }
        }
    }
}
