import Foundation
import HTTPCore
@testable import HTTPServer
import Logging

/// A server on an ephemeral loopback port with a test handler: `/slow` waits at `slow` until the test lets it go,
/// everything else answers 200 with the path as body, from another thread (a deferred plan);
/// `/inline` and `/not-modified` (a 304 whose body stands for the 200's) are answered on the I/O queue.
final class ServerHarness {
    let server: Server
    let port: UInt16
    let statistics = ServerStatistics()
    let slow = Gate()

    /// Where `/slow` waits: the test learns when a request is there, and lets it go.
    final class Gate: Sendable {
        private let arrivals = DispatchSemaphore(value: 0)
        private let releases = DispatchSemaphore(value: 0)

        /// Waits until a request is at the gate; false after 10 s.
        func waitForArrival() -> Bool { arrivals.wait(timeout: .now() + 10) == .success }
        /// Lets one request through (one that comes later passes at once).
        func release() { releases.signal() }

        fileprivate func pass() {
            arrivals.signal()
            releases.wait()
        }
    }

    init(tls: TLSConfiguration? = nil, configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.tls = tls
        configure(&configuration)
        let respond: @Sendable (HTTPRequest) -> HTTPResponse = { [slow] request in
            if request.path == "/slow" { slow.pass() }
            return .json(.ok, Array("\"\(request.path) \(request.body.count)\"".utf8))
        }
        let handler = HTTPHandler(plan: { request in
            switch request.path {
            case "/inline": .ready(respond(request))
            case "/not-modified": .ready(HTTPResponse(status: .notModified, body: Array("never sent".utf8)))
            default: .deferred { answer in DispatchQueue.global().async { answer(respond(request)) } }
            }
        })
        server = try Server(configuration: configuration, handler: handler, logger: quietLogger, statistics: statistics)
        port = try server.start()
    }

    /// Shuts down gracefully and waits for it to finish.
    func stop(deadlineSeconds: Double = 5) {
        let done = DispatchSemaphore(value: 0)
        server.shutdown(deadlineSeconds: deadlineSeconds) { done.signal() }
        done.wait()
    }
}

/// Server events at warn and below stay out of the test output.
let quietLogger = Logger(level: .error, format: .logfmt, writer: LogWriter())
