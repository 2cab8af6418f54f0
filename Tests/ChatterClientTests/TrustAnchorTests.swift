@testable import ChatterClient
import Testing

/// Which anchor a connection gets: host × the certificate's names × `--cacert`.
@Suite struct TrustAnchorTests {
    static let local = "./chatterd.crt"

    /// The choice for `url`, and whether the certificate's names were read to make it.
    func choose(_ url: String, caFile: String? = nil, localCertificate: String? = local, pem: String?) throws
        -> (TrustAnchor, asked: Bool)
    {
        var asked = false
        let anchor = TrustAnchor.choose(
            for: try ServerURL(parsing: url), caFile: caFile, localCertificate: localCertificate,
            names: { path in
                asked = true
                #expect(path == Self.local)
                return pem.flatMap { CertificateNames(pem: Array($0.utf8)) }
            })
        return (anchor, asked)
    }

    @Test(arguments: ["https://localhost:8443", "https://127.0.0.1", "https://[::1]:8443", "https://[0:0::1]"])
    func loopbackTrustsTheLocalCertificateWithoutReadingIt(url: String) throws {
        let (anchor, asked) = try choose(url, pem: TestCertificates.constrainedCA)
        #expect(anchor == .localCertificate(Self.local) && !asked)
    }

    @Test(arguments: [
        ("https://chatter.example.org", TestCertificates.legacy, true),
        ("https://192.0.2.10", TestCertificates.legacy, true),
        ("https://evil.example.com", TestCertificates.legacy, false),
        ("https://127.0.0.2", TestCertificates.legacy, false),
        ("https://www.example.net", TestCertificates.constrainedCA, true),
        ("https://[2001:db8:1::1]", TestCertificates.constrainedCA, true),
        ("https://bad.example.net", TestCertificates.constrainedCA, false),
        ("https://chatter.example.org", TestCertificates.commonNameOnly, false),
    ])
    func otherHostsTrustItOnlyForItsOwnNames(url: String, pem: String, trusted: Bool) throws {
        let (anchor, asked) = try choose(url, pem: pem)
        #expect(asked)
        #expect(anchor == (trusted ? .localCertificate(Self.local) : .system(passedOver: Self.local)))
    }

    @Test func anUnreadableLocalCertificateIsTrustedForNoOtherHost() throws {
        #expect(try choose("https://chatter.example.org", pem: nil).0 == .system(passedOver: Self.local))
    }

    @Test(arguments: ["https://localhost", "https://evil.example.com", "https://127.0.0.2"])
    func caFileIsTheAnchorForAnyHost(url: String) throws {
        let (anchor, asked) = try choose(url, caFile: "/etc/ca.pem", localCertificate: nil, pem: nil)
        #expect(anchor == .caFile("/etc/ca.pem") && !asked)
    }

    @Test func withoutAnyFileTheSystemStore() throws {
        let (anchor, asked) = try choose("https://localhost", localCertificate: nil, pem: nil)
        #expect(anchor == .system(passedOver: nil) && !asked)
    }

    @Test func theErrorSaysWhyTheLocalCertificateWasNotUsed() throws {
        let server = try ServerURL(parsing: "https://evil.example.com")
        #expect(
            TrustAnchor.system(passedOver: Self.local).description(for: server)
                == "the system's trusted CAs: ./chatterd.crt is trusted only for localhost and the names in it, "
                + "not evil.example.com; use --cacert ./chatterd.crt to trust it for this server")
        #expect(TrustAnchor.localCertificate(Self.local).description(for: server) == "CA file ./chatterd.crt")
    }
}
