import COpenSSL
import Foundation
import HTTPServer
import Testing

/// TLS over loopback: protocol versions, ALPN, and refusing unusable certificates or keys.
@Suite struct TLSTests {
    let certificate: TestCertificate

    init() throws {
        certificate = try TestCertificate.make()
    }

    var configuration: TLSConfiguration {
        TLSConfiguration(certificatePath: certificate.certificatePath, privateKeyPath: certificate.keyPath)
    }

    @Test(arguments: [COpenSSL_TLS1_2_VERSION(), COpenSSL_TLS1_3_VERSION()])
    func servesOverTLS12And13WithALPN(version: Int32) throws {
        let harness = try ServerHarness(tls: configuration)
        defer { harness.stop() }
        let client = try TestClient(port: harness.port, tlsVersion: version)
        #expect(client.alpn == "http/1.1")
        client.send("GET /tls HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let response = try #require(client.readResponse())
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "\"/tls 0\"")
    }

    @Test func refusesTLS11() throws {
        let harness = try ServerHarness(tls: configuration)
        defer { harness.stop() }
        #expect(throws: TestClient.Failure.self) {
            try TestClient(port: harness.port, tlsVersion: COpenSSL_TLS1_1_VERSION())
        }
        // The server keeps serving after the failed handshake.
        let client = try TestClient(port: harness.port, tlsVersion: COpenSSL_TLS1_3_VERSION())
        client.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(client.readResponse()?.status == 200)
    }

    @Test func refusesAClientOfferingOnlyOtherProtocols() throws {
        let harness = try ServerHarness(tls: configuration)
        defer { harness.stop() }
        #expect(throws: TestClient.Failure.self) {
            try TestClient(port: harness.port, tlsVersion: COpenSSL_TLS1_3_VERSION(), alpn: ["spdy/3.1", "h2c"])
        }
    }

    @Test func prefersH2WhateverTheClientsOrder() throws {
        let harness = try ServerHarness(tls: configuration)
        defer { harness.stop() }
        let client = try TestClient(port: harness.port, tlsVersion: COpenSSL_TLS1_3_VERSION(), alpn: ["http/1.1", "h2"])
        #expect(client.alpn == "h2")
    }

    @Test func answersHTTP11ToAClientOfferingOnlyIt() throws {
        let harness = try ServerHarness(tls: configuration)
        defer { harness.stop() }
        let client = try TestClient(port: harness.port, tlsVersion: COpenSSL_TLS1_3_VERSION(), alpn: ["http/1.1"])
        #expect(client.alpn == "http/1.1")
        client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.readResponse()?.status == 200)
    }

    @Test func withHTTP2OffOnlyHTTP11IsOffered() throws {
        let harness = try ServerHarness(tls: configuration) { $0.http2.enabled = false }
        defer { harness.stop() }
        let client = try TestClient(port: harness.port, tlsVersion: COpenSSL_TLS1_3_VERSION(), alpn: ["h2", "http/1.1"])
        #expect(client.alpn == "http/1.1")
        #expect(throws: TestClient.Failure.self) {
            try TestClient(port: harness.port, tlsVersion: COpenSSL_TLS1_3_VERSION(), alpn: ["h2"])
        }
    }

    @Test func refusesAKeyOthersCanRead() throws {
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: certificate.keyPath)
        let error = #expect(throws: TLSError.self) { try TLSContext(configuration) }
        #expect(error?.description.contains(certificate.keyPath) == true)
    }

    @Test func refusesAKeyThatDoesNotMatchTheCertificate() throws {
        let other = try certificate.makeOtherKey()
        let mismatched = TLSConfiguration(certificatePath: certificate.certificatePath, privateKeyPath: other)
        let error = #expect(throws: TLSError.self) { try TLSContext(mismatched) }
        #expect(error?.description.contains("does not match") == true)
    }

    @Test func refusesAnExpiredCertificate() throws {
        let expired = TLSConfiguration(
            certificatePath: try certificate.makeExpiredCertificate(), privateKeyPath: certificate.keyPath)
        let error = #expect(throws: TLSError.self) { try TLSContext(expired) }
        #expect(error?.description.contains("expired.crt has expired") == true)
    }

    @Test func refusesAMissingCertificate() throws {
        let missing = TLSConfiguration(certificatePath: "/nonexistent/c.crt", privateKeyPath: certificate.keyPath)
        let error = #expect(throws: TLSError.self) { try TLSContext(missing) }
        #expect(error?.description.contains("/nonexistent/c.crt") == true)
    }

    @Test func silentClientIsClosedAtTheHandshakeDeadline() throws {
        let harness = try ServerHarness(tls: configuration) { $0.timeouts.handshakeSeconds = 0.3 }
        defer { harness.stop() }
        let silent = try TestClient(port: harness.port)
        #expect(silent.isClosedByServer())
    }

    @Test func aReloadServesTheNewPairToNewConnectionsAndOldOnesKeepTheirs() throws {
        let harness = try ServerHarness(tls: configuration)
        defer { harness.stop() }
        let before = try TestClient(port: harness.port, tlsVersion: COpenSSL_TLS1_3_VERSION())
        #expect(before.peerSubject == "/CN=localhost")
        try certificate.replace(with: try TestCertificate.make(commonName: "renewed"))
        let notAfter = try #require(try harness.server.reloadCertificate())
        #expect(notAfter > Date().timeIntervalSince1970 && notAfter < Date().timeIntervalSince1970 + 3 * 86_400)
        #expect(harness.server.certificateNotAfter == notAfter)
        let after = try TestClient(port: harness.port, tlsVersion: COpenSSL_TLS1_3_VERSION())
        #expect(after.peerSubject == "/CN=renewed")
        before.send("GET /old HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(before.readResponse()?.status == 200, "the open connection keeps its session")
    }

    @Test func aPairThatCannotBeLoadedIsRefusedAndTheOldOneStays() throws {
        let harness = try ServerHarness(tls: configuration)
        defer { harness.stop() }
        let served = harness.server.certificateNotAfter
        let expired = try certificate.makeExpiredCertificate()
        let otherKey = try certificate.makeOtherKey()
        try Data(contentsOf: URL(fileURLWithPath: expired)).write(to: URL(fileURLWithPath: certificate.certificatePath))
        #expect(throws: TLSError.self) { try harness.server.reloadCertificate() }
        try certificate.replace(with: try TestCertificate.make(commonName: "mismatched"))
        try certificate.replaceKey(with: otherKey)
        #expect(throws: TLSError.self) { try harness.server.reloadCertificate() }
        try FileManager.default.removeItem(atPath: certificate.certificatePath)
        #expect(throws: TLSError.self) { try harness.server.reloadCertificate() }
        #expect(harness.server.certificateNotAfter == served)
        let client = try TestClient(port: harness.port, tlsVersion: COpenSSL_TLS1_3_VERSION())
        #expect(client.peerSubject == "/CN=localhost", "still the first pair")
    }

    @Test func plainHTTPHasNothingToReload() throws {
        let harness = try ServerHarness()
        defer { harness.stop() }
        #expect(try harness.server.reloadCertificate() == nil)
        #expect(harness.server.certificateNotAfter == nil)
    }
}
