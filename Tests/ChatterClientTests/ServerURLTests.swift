@testable import ChatterClient
import Testing

@Suite struct ServerURLTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var text: String
        var tls: Bool
        var host: String
        var kind: ServerURL.HostKind
        var port: UInt16
        var base: String
        var hostHeader: String
        var testDescription: String { text }
    }

    @Test(arguments: [
        Case(
            text: "https://localhost:8443", tls: true, host: "localhost", kind: .name, port: 8443, base: "",
            hostHeader: "localhost:8443"),
        Case(
            text: "HTTPS://Chatter.Example.ORG/", tls: true, host: "chatter.example.org", kind: .name, port: 443,
            base: "", hostHeader: "chatter.example.org"),
        Case(
            text: "http://127.0.0.1", tls: false, host: "127.0.0.1", kind: .ipv4, port: 80, base: "",
            hostHeader: "127.0.0.1"),
        Case(
            text: "https://[::1]:9000/api/v1//", tls: true, host: "::1", kind: .ipv6, port: 9000, base: "/api/v1",
            hostHeader: "[::1]:9000"),
        Case(
            text: "http://[2001:db8::1]", tls: false, host: "2001:db8::1", kind: .ipv6, port: 80, base: "",
            hostHeader: "[2001:db8::1]"),
        Case(
            text: "https://10.0.0.7:443", tls: true, host: "10.0.0.7", kind: .ipv4, port: 443, base: "",
            hostHeader: "10.0.0.7"),
        // Not a dotted quad, so it is a name to resolve and to match as a DNS name.
        Case(text: "https://127.1", tls: true, host: "127.1", kind: .name, port: 443, base: "", hostHeader: "127.1"),
    ])
    func parses(_ c: Case) throws {
        let url = try ServerURL(parsing: c.text)
        #expect(url.usesTLS == c.tls)
        #expect(url.host == c.host)
        #expect(url.hostKind == c.kind)
        #expect(url.port == c.port)
        #expect(url.basePath == c.base)
        #expect(url.hostHeader == c.hostHeader)
        #expect(url.path(for: "getmaps") == c.base + "/getmaps")
        #expect(try ServerURL(parsing: url.description) == url, "the canonical form reads back the same")
    }

    @Test(arguments: [
        "localhost:8443", "ftp://host", "https://", "https://:8443", "https://host:0", "https://host:65536",
        "https://host:port", "https://host:-1", "https://user:pw@host", "https://host/path?x=1", "https://host/#top",
        "https://[::1", "https://[::1]x", "https://[nonsense]", "https://ho st", "https://host/a b",
        "https://host/%2e", "https://héllo.example",
    ])
    func rejects(_ text: String) {
        #expect {
            try ServerURL(parsing: text)
        } throws: { error in
            guard case .usage(let message) = error as? ClientError else { return false }
            return message.hasPrefix("bad server URL \(text)")
        }
    }
}
