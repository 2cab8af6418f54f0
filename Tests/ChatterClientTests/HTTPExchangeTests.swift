@testable import ChatterClient
import Testing

/// The transport over real loopback sockets (plain HTTP; TLS is covered by Tests/EndToEnd/test_client.py).
@Suite struct HTTPExchangeTests {
    func options(_ port: UInt16, timeout: Double = 10) throws -> ConnectionOptions {
        ConnectionOptions(
            server: try ServerURL(parsing: "http://127.0.0.1:\(port)"), caFile: nil, timeoutSeconds: timeout)
    }

    @Test func chunkedResponseArrivingInPieces() throws {
        let pieces = [
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n", "\r\n4\r\n[[\"a",
            "\r\nf\r\n\",\"b\",\"c\",\"d\"]]", "\r\n0\r\n\r\n",
        ].map { Array($0.utf8) }
        let server = try LoopbackServer(answer: pieces)
        let request = HTTPClientRequest(method: "GET", target: "/getchatts", host: "127.0.0.1:\(server.port)")
        let response = try HTTPExchange.perform(request, options: try options(server.port))
        #expect(try ChattResponse.rows(response, width: 4) == [["a", "b", "c", "d"]])
        #expect(server.request().hasPrefix("GET /getchatts HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"))
    }

    @Test func serverClosingWithoutAnAnswer() throws {
        let server = try LoopbackServer(answer: [])
        let request = HTTPClientRequest(method: "GET", target: "/", host: "h")
        let hint = " (if the server speaks TLS, use an https:// URL)"
        #expect(throws: ClientError.connection("the server closed the connection without answering" + hint)) {
            _ = try HTTPExchange.perform(request, options: try options(server.port))
        }
    }

    @Test func closedPortIsAConnectionFailure() throws {
        let port = try closedPort()
        let request = HTTPClientRequest(method: "GET", target: "/", host: "h")
        #expect(throws: ClientError.connection("cannot connect to 127.0.0.1:\(port): Connection refused")) {
            _ = try HTTPExchange.perform(request, options: try options(port))
        }
    }

    @Test func silentServerTimesOut() throws {
        // The kernel completes the connection from the listen backlog, but nobody ever answers.
        let server = try LoopbackServer(answer: [], accepting: false)
        let request = HTTPClientRequest(method: "GET", target: "/", host: "h")
        #expect(
            performing: {
                _ = try HTTPExchange.perform(request, options: try options(server.port, timeout: 0.2))
            },
            throws: { error in
                guard case .connection(let message) = error as? ClientError else { return false }
                return message.hasPrefix("timed out receiving from 127.0.0.1:\(server.port)")
            })
    }

    @Test func unreadableCAFileFailsBeforeConnecting() throws {
        let options = ConnectionOptions(
            server: try ServerURL(parsing: "https://127.0.0.1:1"), caFile: "/nonexistent/ca.crt", timeoutSeconds: 1)
        #expect(throws: ClientError.tls("cannot read CA file /nonexistent/ca.crt: No such file or directory")) {
            _ = try HTTPExchange.perform(HTTPClientRequest(method: "GET", target: "/", host: "h"), options: options)
        }
    }
}
