import HTTPCore
@testable import HTTPServer
import Testing

/// `--max-connections-per-ip` counts clients as `ClientGroup` says: IPv6 per prefix, IPv4 per address.
@Suite struct ClientConnectionsTests {
    static func client(_ address: String, prefix: Int = 64) -> ClientGroup {
        var configuration = ServerConfiguration()
        configuration.ipv6ClientPrefixLength = prefix
        return configuration.clientGroup(of: IPAddress(address)!)
    }

    @Test func oneIPv6PrefixSharesTheLimit() {
        let clients = ClientConnections(limit: 2)
        #expect(clients.admit(Self.client("2001:db8::1")))
        #expect(clients.admit(Self.client("2001:db8::2")))
        #expect(!clients.admit(Self.client("2001:db8::3")), "a third address of the same /64")
        #expect(!clients.admit(Self.client("2001:db8::1")))
        #expect(clients.admit(Self.client("2001:db8:0:1::1")), "another /64 is another client")
        clients.release(Self.client("2001:db8::2"))
        #expect(clients.admit(Self.client("2001:db8::abcd")), "a closed connection frees the /64's slot")
    }

    @Test func ipv4CountsPerAddressAndAMappedAddressAsItsIPv4One() {
        let clients = ClientConnections(limit: 2)
        #expect(clients.admit(Self.client("198.51.100.1")))
        #expect(clients.admit(Self.client("::ffff:198.51.100.1")))
        #expect(!clients.admit(Self.client("198.51.100.1")), "the mapped connection counted for the IPv4 address")
        #expect(clients.admit(Self.client("198.51.100.2")), "the next IPv4 address is another client")
    }

    @Test func thePrefixIsTheOperators() {
        let perAddress = ClientConnections(limit: 1)
        #expect(perAddress.admit(Self.client("2001:db8::1", prefix: 128)))
        #expect(perAddress.admit(Self.client("2001:db8::2", prefix: 128)))
        let perSite = ClientConnections(limit: 1)
        #expect(perSite.admit(Self.client("2001:db8:0:1::1", prefix: 48)))
        #expect(!perSite.admit(Self.client("2001:db8:0:2::1", prefix: 48)))
    }
}
