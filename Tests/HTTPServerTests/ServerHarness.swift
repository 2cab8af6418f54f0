import Foundation
import HTTPCore
@testable import HTTPServer

/// A server on an ephemeral loopback port with a test handler: `/slow` waits 300 ms, everything else
/// answers 200 with the path as body;
/// `/inline` is answered on the I/O queue.
final class ServerHarness {
    let server: Server
    let port: UInt16

    init(tls: TLSConfiguration? = nil, configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.tls = tls
        configure(&configuration)
        let handler = HTTPHandler(respond: { request in
            if request.path == "/slow" { usleep(300_000) }
            return .json(.ok, Array("\"\(request.path) \(request.body.count)\"".utf8))
        }, mayBlock: { $0.path != "/inline" })
        server = try Server(configuration: configuration, handler: handler, log: { _, _ in })
        port = try server.start()
    }

    /// Shuts down gracefully and waits for it to finish.
    func stop(deadlineSeconds: Double = 5) {
        let done = DispatchSemaphore(value: 0)
        server.shutdown(deadlineSeconds: deadlineSeconds) { done.signal() }
        done.wait()
    }
}
