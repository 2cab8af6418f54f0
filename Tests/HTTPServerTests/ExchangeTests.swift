import Foundation
import HTTPCore
@testable import HTTPServer
import Locking
import Syscalls
import Testing

/// What the server reports to `observe` and echoes back: request ids, remote addresses, body bytes.
@Suite struct ExchangeTests {
    /// A server whose handler answers `"<path>"` and whose observer keeps every exchange, plus the ids it saw.
    final class Recorder {
        let exchanges = Locked([HTTPExchange]())
        let idsSeenByHandler = Locked([String]())
        let server: Server
        let port: UInt16

        init(reusePort: Bool = false, port: UInt16 = 0) throws {
            var configuration = ServerConfiguration()
            configuration.host = "127.0.0.1"
            configuration.port = port
            configuration.reusePort = reusePort
            let (exchanges, ids) = (self.exchanges, self.idsSeenByHandler)
            let handler = HTTPHandler(
                plan: { request in
                    .deferred { respond in
                        ids.withLock { $0.append(request.requestID ?? "none") }
                        respond(.json(.ok, Array("\"\(request.path)\"".utf8)))
                    }
                },
                observe: { exchange in exchanges.withLock { $0.append(exchange) } })
            server = try Server(configuration: configuration, handler: handler, logger: quietLogger)
            self.port = try server.start()
        }

        func stop() {
            let done = DispatchSemaphore(value: 0)
            server.shutdown(deadlineSeconds: 2) { done.signal() }
            done.wait()
        }

        var recorded: [HTTPExchange] { exchanges.withLock { $0 } }
    }

    @Test(arguments: ["abc", "0af3-12.x:y_z", String(repeating: "A", count: 64)])
    func acceptableRequestIDsAreKeptAndEchoed(id: String) throws {
        let recorder = try Recorder()
        defer { recorder.stop() }
        let client = try TestClient(port: recorder.port)
        client.send("GET /a HTTP/1.1\r\nHost: x\r\nX-Request-Id: \(id)\r\n\r\n")
        let response = try #require(client.readResponse())
        #expect(response.header("X-Request-Id") == id)
        #expect(recorder.idsSeenByHandler.withLock { $0 } == [id])
        #expect(recorder.recorded.map(\.requestID) == [id])
    }

    @Test(arguments: ["", "a b", "a\"b", "a;b", "a=b", "é", String(repeating: "A", count: 65)])
    func otherRequestIDsAreReplacedEverywhere(id: String) throws {
        let recorder = try Recorder()
        defer { recorder.stop() }
        let client = try TestClient(port: recorder.port)
        client.send("GET /a HTTP/1.1\r\nHost: x\r\nX-Request-Id: \(id)\r\n\r\n")
        let response = try #require(client.readResponse())
        let echoed = try #require(response.header("X-Request-Id"))
        #expect(echoed != id && RequestID.isAcceptable(echoed))
        #expect(recorder.idsSeenByHandler.withLock { $0 } == [echoed], "the handler sees only the replacement")
        #expect(recorder.recorded.map(\.requestID) == [echoed])
    }

    @Test func twoRequestIDFieldsAreReplacedEvenWhenEachIsAcceptable() throws {
        let recorder = try Recorder()
        defer { recorder.stop() }
        let client = try TestClient(port: recorder.port)
        client.send("GET /a HTTP/1.1\r\nHost: x\r\nX-Request-Id: first\r\nX-Request-Id: second\r\n\r\n")
        let response = try #require(client.readResponse())
        let echoed = try #require(response.header("X-Request-Id"))
        #expect(echoed.wholeMatch(of: #/[0-9a-f]{8}-[0-9a-f]+-[0-9]+/#) != nil, "made here, not \(echoed)")
        #expect(recorder.idsSeenByHandler.withLock { $0 } == [echoed])
        #expect(recorder.recorded.map(\.requestID) == [echoed])
    }

    @Test func madeIDsAreUniquePerRequestAndShareTheServerPrefix() throws {
        let recorder = try Recorder()
        defer { recorder.stop() }
        var ids: [String] = []
        for _ in 0..<3 {
            let client = try TestClient(port: recorder.port)
            client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
            for _ in 0..<2 { ids.append(try #require(client.readResponse()?.header("X-Request-Id"))) }
        }
        #expect(Set(ids).count == 6)
        #expect(Set(ids.map { $0.prefix(9) }).count == 1)
        #expect(ids.allSatisfy { $0.wholeMatch(of: #/[0-9a-f]{8}-[0-9a-f]+-[0-9]+/#) != nil }, "\(ids)")
    }

    @Test func theExchangeCarriesTheRemoteAddressAndBodyBytes() throws {
        let recorder = try Recorder()
        defer { recorder.stop() }
        let client = try TestClient(port: recorder.port)
        client.send("GET /abc HTTP/1.1\r\nHost: x\r\n\r\nHEAD /abc HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = client.readResponse()
        _ = client.readResponse(bodyless: true)
        let exchanges = recorder.recorded
        #expect(exchanges.map(\.bodyBytes) == [6, 0])
        #expect(exchanges.map { $0.request?.method } == [.GET, .HEAD])
        #expect(exchanges.allSatisfy { $0.remoteAddress.wholeMatch(of: #/127\.0\.0\.1:[0-9]+/#) != nil })
        #expect(Set(exchanges.map(\.remoteAddress)).count == 1, "one connection, one address")
        #expect(exchanges.allSatisfy { $0.seconds >= 0 && $0.response.status == .ok })
    }

    @Test func aParseErrorIsReportedWithoutARequestAndStillGetsAnID() throws {
        let recorder = try Recorder()
        defer { recorder.stop() }
        let client = try TestClient(port: recorder.port)
        client.send("GET /a HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n")
        let response = try #require(client.readResponse())
        #expect(response.status == 400)
        let exchange = try #require(recorder.recorded.first)
        #expect(exchange.request == nil && exchange.response.status == .badRequest)
        #expect(response.header("X-Request-Id") == exchange.requestID && RequestID.isAcceptable(exchange.requestID))
    }

    @Test func twoServersShareAPortOnlyWithReusePort() throws {
        let first = try Recorder(reusePort: true)
        defer { first.stop() }
        let second = try Recorder(reusePort: true, port: first.port)
        defer { second.stop() }
        #expect(second.port == first.port)
        // Without the option, binding the same port fails with EADDRINUSE.
        #expect {
            _ = try Recorder(port: first.port)
        } throws: { error in
            (error as? SyscallError)?.errno == EADDRINUSE
        }
        // The kernel spreads new connections over both listeners.
        for _ in 0..<64 where first.recorded.isEmpty || second.recorded.isEmpty {
            let client = try TestClient(port: first.port)
            client.send("GET /spread HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            _ = client.readResponse()
        }
        #expect(!first.recorded.isEmpty && !second.recorded.isEmpty)
    }

    @Test func aListenerWithoutReusePortKeepsItsPort() throws {
        let first = try Recorder()
        defer { first.stop() }
        #expect(throws: SyscallError.self) { _ = try Recorder(reusePort: true, port: first.port) }
    }
}
