import Foundation
@testable import HTTPServer
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What an accepted socket is set up with, read back from the kernel.
@Suite struct ListeningSocketTests {
    /// An integer TCP option of `fd`.
    static func tcpOption(_ fd: Int32, _ option: Int32) -> Int32? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, Int32(IPPROTO_TCP), option, &value, &length) == 0 ? value : nil
    }

    @Test func acceptedSocketsHoldAtMostTheUnsentBytesConfigured() throws {
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0, backlog: 4, maxUnsentBytes: 48 * 1024)
        defer { close(listener.fd) }
        let client = try TestClient(port: listener.port)
        defer { withExtendedLifetime(client) {} }
        var accepted: (fd: Int32, peer: ClientAddress)?
        // The connection is in the backlog once connect returned; accept is non-blocking, so poll for it.
        for _ in 0..<100 where accepted == nil {
            accepted = try listener.accept()
            if accepted == nil { usleep(10_000) }
        }
        let fd = try #require(accepted?.fd)
        defer { close(fd) }
        #expect(Self.tcpOption(fd, TCP_NOTSENT_LOWAT) == Int32(48 * 1024))
        #expect(Self.tcpOption(fd, TCP_NODELAY) == 1)
    }
}
