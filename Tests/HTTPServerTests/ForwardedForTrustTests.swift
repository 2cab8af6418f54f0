import HTTPCore
@testable import HTTPServer
import Testing

/// Whose word names the client behind a trusted proxy that sent no PROXY header: on plain HTTP the proxy's
/// `X-Forwarded-For`; on TLS, where a passthrough proxy cannot write one and the client can, only with
/// `trustedProxyTerminatesTLS`.
@Suite struct ForwardedForTrustTests {
    static let proxies = [AddressRange("198.18.0.0/16")!]
    static let certificate = TLSConfiguration(certificatePath: "unused.crt", privateKeyPath: "unused.key")

    @Test(arguments: [
        // (TLS listener, the proxy terminates TLS, X-Forwarded-For believed)
        (false, false, true),
        (false, true, true),
        (true, false, false),
        (true, true, true),
    ])
    func whenForwardedForIsBelieved(tls: Bool, terminates: Bool, believed: Bool) {
        var configuration = ServerConfiguration()
        configuration.trustedProxies = Self.proxies
        configuration.tls = tls ? Self.certificate : nil
        configuration.trustedProxyTerminatesTLS = terminates
        #expect(configuration.forwardedForProxies == (believed ? Self.proxies : []))
    }

    @Test func withoutTrustedProxiesNothingIsBelieved() {
        var configuration = ServerConfiguration()
        configuration.trustedProxyTerminatesTLS = true
        #expect(configuration.forwardedForProxies.isEmpty)
    }

    /// The client the exchange of one request with `X-Forwarded-For: 203.0.113.9` is reported and limited as, from
    /// the trusted proxy 198.18.0.9 (the fake connection's peer) without a PROXY header.
    static func clientOfForwardedRequest(tls: Bool, terminates: Bool) throws -> (String, ClientGroup?) {
        let pipeline = FakePipeline { configuration in
            configuration.trustedProxies = proxies
            configuration.tls = tls ? certificate : nil
            configuration.http2.enabled = false
            configuration.trustedProxyTerminatesTLS = terminates
        }
        pipeline.send("POST /x HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 203.0.113.9\r\nContent-Length: 0\r\n\r\n")
        let exchange = try #require(pipeline.exchanges.withLock { $0.first })
        return (exchange.remoteAddress, exchange.request?.clientGroup)
    }

    @Test func onTLSAPassthroughProxysClientCannotNameItself() throws {
        let (remote, group) = try Self.clientOfForwardedRequest(tls: true, terminates: false)
        #expect(remote == "198.18.0.9:4000", "logged as the proxy")
        #expect(group == ClientGroup(IPAddress("198.18.0.9")!, ipv6PrefixLength: 64), "limited as the proxy")
    }

    @Test func onTLSAProxyThatTerminatesTLSNamesTheClient() throws {
        let (remote, group) = try Self.clientOfForwardedRequest(tls: true, terminates: true)
        #expect(remote == "203.0.113.9")
        #expect(group == ClientGroup(IPAddress("203.0.113.9")!, ipv6PrefixLength: 64))
    }

    @Test func onPlainHTTPAnHTTPProxyNamesTheClient() throws {
        let (remote, group) = try Self.clientOfForwardedRequest(tls: false, terminates: false)
        #expect(remote == "203.0.113.9")
        #expect(group == ClientGroup(IPAddress("203.0.113.9")!, ipv6PrefixLength: 64))
    }
}
