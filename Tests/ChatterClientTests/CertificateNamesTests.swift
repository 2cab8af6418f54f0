@testable import ChatterClient
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct CertificateNamesTests {
    func names(_ pem: String) throws -> CertificateNames {
        try #require(CertificateNames(pem: Array(pem.utf8)))
    }

    @Test func subjectAltNamesOfALegacyCertificate() throws {
        let expected = CertificateNames(
            dnsNames: ["localhost", "chatter.example.org", "*.wild.example"],
            addresses: [[127, 0, 0, 1], [192, 0, 2, 10], [0x20, 0x01, 0x0D, 0xB8] + Array(repeating: 0, count: 11) + [5]])
        #expect(try names(TestCertificates.legacy) == expected)
    }

    @Test func nameConstraintsOfACA() throws {
        let v6Prefix: [UInt8] = [0x20, 0x01, 0x0D, 0xB8, 0, 1] + Array(repeating: 0, count: 10)
        let v6Mask = Array(repeating: UInt8(0xFF), count: 6) + Array(repeating: 0, count: 10)
        let expected = CertificateNames(
            permittedDomains: ["example.net", ".sub.example"],
            permittedRanges: [
                .init(address: [198, 51, 100, 0], mask: [255, 255, 255, 0]), .init(address: v6Prefix, mask: v6Mask),
            ],
            excludedDomains: ["bad.example.net"],
            excludedRanges: [.init(address: [198, 51, 100, 128], mask: [255, 255, 255, 128])])
        #expect(try names(TestCertificates.constrainedCA) == expected)
    }

    @Test func aChainFileHasTheNamesOfEveryCertificate() throws {
        let chain = try names(TestCertificates.leaf + "\n" + TestCertificates.constrainedCA)
        #expect(chain.dnsNames == ["leaf.example.net"] && chain.addresses == [[198, 51, 100, 7]])
        #expect(chain.permittedDomains == ["example.net", ".sub.example"])
    }

    @Test func theCommonNameIsNoName() throws {
        #expect(try names(TestCertificates.commonNameOnly) == CertificateNames())
    }

    @Test func noCertificateNoNames() {
        #expect(CertificateNames(pem: Array("not a certificate\n".utf8)) == nil)
        #expect(CertificateNames(pem: []) == nil)
        #expect(CertificateNames(pemFile: "/nonexistent/chatterd.crt") == nil)
    }

    @Test func readsAFile() throws {
        var template = Array("/tmp/chatter-names-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        try #require(fd >= 0)
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { unlink(path) }
        let bytes = Array(TestCertificates.legacy.utf8)
        #expect(write(fd, bytes, bytes.count) == bytes.count)
        close(fd)
        #expect(CertificateNames(pemFile: path) == (try names(TestCertificates.legacy)))
    }

    @Test(arguments: [
        ("https://localhost", true), ("https://LOCALHOST:8443", true), ("https://chatter.example.org", true),
        ("https://a.wild.example", true), ("https://wild.example", false), ("https://a.b.wild.example", false),
        ("https://127.0.0.1", true), ("https://192.0.2.10", true), ("https://192.0.2.11", false),
        ("https://[2001:db8::5]", true), ("https://[2001:DB8:0:0:0:0:0:5]", true), ("https://[2001:db8::6]", false),
        ("https://example.org", false), ("https://evil-chatter.example.org", false),
        ("https://chatter.example.org.evil", false),
    ])
    func legacyCovers(url: String, covered: Bool) throws {
        #expect(try names(TestCertificates.legacy).covers(try ServerURL(parsing: url)) == covered)
    }

    @Test(arguments: [
        ("https://example.net", true), ("https://www.Example.net", true), ("https://badexample.net", false),
        ("https://bad.example.net", false), ("https://x.bad.example.net", false), ("https://sub.example", false),
        ("https://a.sub.example", true), ("https://198.51.100.7", true), ("https://198.51.100.200", false),
        ("https://198.51.101.1", false), ("https://[2001:db8:1::9]", true), ("https://[2001:db8:2::1]", false),
        ("https://localhost", false), ("https://127.0.0.1", false),
    ])
    func constrainedCACovers(url: String, covered: Bool) throws {
        #expect(try names(TestCertificates.constrainedCA).covers(try ServerURL(parsing: url)) == covered)
    }

    @Test func anEmptySubtreeCoversNothing() throws {
        let names = CertificateNames(permittedDomains: [""])
        #expect(!names.covers(try ServerURL(parsing: "https://anything.example")))
    }
}
