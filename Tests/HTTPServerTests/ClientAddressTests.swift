import HTTPCore
@testable import HTTPServer
import Testing

/// Addresses, ranges, PROXY protocol headers and X-Forwarded-For: pure parsing, every byte decided here.
@Suite struct ClientAddressTests {
    @Test func addressesParseAndPrint() throws {
        #expect(IPAddress("192.0.2.1")?.description == "192.0.2.1")
        #expect(IPAddress("2001:db8::1")?.description == "2001:db8::1")
        #expect(IPAddress("::ffff:192.0.2.1") == IPAddress("192.0.2.1"), "a mapped IPv4 address is the IPv4 one")
        for bad in ["", "192.0.2", "192.0.2.256", "localhost", "[::1]", "1.2.3.4:80", " 1.2.3.4"] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
    }

    @Test func rangesContainWhatTheirPrefixCovers() throws {
        let block = try #require(AddressRange("10.1.0.0/16"))
        #expect(block.contains(try #require(IPAddress("10.1.255.3"))))
        #expect(!block.contains(try #require(IPAddress("10.2.0.1"))))
        let single = try #require(AddressRange("127.0.0.1"))
        let one = try #require(IPAddress("127.0.0.1"))
        let two = try #require(IPAddress("127.0.0.2"))
        #expect(single.contains(one) && !single.contains(two))
        let odd = try #require(AddressRange("192.168.0.0/23"))
        let inside = try #require(IPAddress("192.168.1.200"))
        let outside = try #require(IPAddress("192.168.2.1"))
        #expect(odd.contains(inside) && !odd.contains(outside))
        let v6 = try #require(AddressRange("fd00::/8"))
        let unique = try #require(IPAddress("fd12::5"))
        let private4 = try #require(IPAddress("10.0.0.1"))
        #expect(v6.contains(unique) && !v6.contains(private4))
        let everything = try #require(AddressRange("0.0.0.0/0"))
        #expect(everything.contains(try #require(IPAddress("203.0.113.9"))))
        for bad in ["10.0.0.0/33", "10.0.0.0/", "10.0.0.0/x", "::/129", "nope/8"] { #expect(AddressRange(bad) == nil, "\(bad)") }
    }

    @Test func proxyVersion1Headers() throws {
        let header = Array("PROXY TCP4 192.0.2.7 10.0.0.1 51234 443\r\n".utf8)
        #expect(ProxyProtocol.parse(header + Array("GET / HTTP/1.1".utf8))
            == .header(length: header.count, client: IPAddress("192.0.2.7"), port: 51234))
        let v6 = Array("PROXY TCP6 2001:db8::7 2001:db8::1 4000 443\r\n".utf8)
        #expect(ProxyProtocol.parse(v6) == .header(length: v6.count, client: IPAddress("2001:db8::7"), port: 4000))
        #expect(ProxyProtocol.parse(Array("PROXY UNKNOWN\r\n".utf8)) == .header(length: 15, client: nil, port: nil))
        #expect(ProxyProtocol.parse(Array("PROX".utf8)) == .incomplete)
        #expect(ProxyProtocol.parse(Array("PROXY TCP4 192.0.2.7 10.0.0.1 51234".utf8)) == .incomplete)
        for bad in ["PROXY TCP4 192.0.2.7 10.0.0.1 51234 443\n", "PROXY TCP4 2001:db8::7 10.0.0.1 1 2\r\n",
                    "PROXY TCP4 192.0.2.7 10.0.0.1 99999 443\r\n", "PROXY TCP5 1.2.3.4 1.2.3.4 1 2\r\n",
                    "PROXY TCP4 192.0.2.7 10.0.0.1 0123 443\r\n", "PROXY " + String(repeating: "x", count: 120)] {
            #expect(ProxyProtocol.parse(Array(bad.utf8)) == .invalid, "\(bad)")
        }
        #expect(ProxyProtocol.parse(Array("GET / HTTP/1.1\r\n".utf8)) == .absent)
        #expect(ProxyProtocol.parse([0x16, 0x03, 0x01]) == .absent, "a TLS ClientHello")
    }

    @Test func proxyVersion2Headers() throws {
        let signature = ProxyProtocol.version2Signature
        let ipv4 = signature + [0x21, 0x11, 0x00, 0x0C, 192, 0, 2, 7, 10, 0, 0, 1, 0xC8, 0x22, 0x01, 0xBB]
        #expect(ProxyProtocol.parse(ipv4 + [0x16]) == .header(length: 28, client: IPAddress("192.0.2.7"), port: 51234))
        let local = signature + [0x20, 0x00, 0x00, 0x00]
        #expect(ProxyProtocol.parse(local) == .header(length: 16, client: nil, port: nil))
        #expect(ProxyProtocol.parse(Array(ipv4.prefix(20))) == .incomplete)
        #expect(ProxyProtocol.parse(Array(signature.prefix(5))) == .incomplete)
        #expect(ProxyProtocol.parse(signature + [0x11, 0x11, 0x00, 0x0C]) == .invalid, "version 1 in a v2 header")
        #expect(ProxyProtocol.parse(signature + [0x21, 0x11, 0x00, 0x04, 1, 2, 3, 4]) == .invalid, "too short")
        #expect(ProxyProtocol.parse(signature + [0x21, 0x11, 0xFF, 0xFF]) == .invalid, "too long")
    }

    @Test func forwardedForIsReadFromTheRightPastTrustedProxies() throws {
        let proxy = ClientAddress(ip: try #require(IPAddress("10.0.0.5")), port: 40000)
        let trusted = [try #require(AddressRange("10.0.0.0/8"))]
        func client(_ values: [String]) -> String {
            ClientAddress.forwarded(by: proxy, forwardedFor: values, trusted: trusted).text
        }
        #expect(client(["203.0.113.9"]) == "203.0.113.9")
        #expect(client(["198.51.100.1, 203.0.113.9"]) == "203.0.113.9", "the leftmost is the client's own claim")
        #expect(client(["203.0.113.9, 10.0.0.7"]) == "203.0.113.9", "a trusted hop is skipped")
        #expect(client(["203.0.113.9", "10.0.0.7"]) == "203.0.113.9", "several fields are one list")
        #expect(client([]) == "10.0.0.5:40000")
        #expect(client(["garbage"]) == "10.0.0.5:40000")
        #expect(client(["203.0.113.9, nonsense"]) == "10.0.0.5:40000", "not read past what is not an address")
        #expect(client(["10.0.0.8, 10.0.0.9"]) == "10.0.0.8", "all trusted: the farthest")
    }

    @Test func theRequestIsLimitedByItsClientsPrefixAndLoggedByItsWholeAddress() {
        let identity = ClientIdentity(
            connection: ClientAddress(ip: IPAddress("2001:db8::7")!, port: 4000), forwardingProxies: [],
            ipv6ClientPrefixLength: 56)
        let (request, client) = identity.marked(HTTPRequest(method: .GET, target: "/", path: "/"))
        #expect(client.text == "[2001:db8::7]:4000")
        #expect(request.clientGroup?.description == "2001:db8::/56")
    }
}
