import HTTPCore
import Testing

/// Which addresses count as one client for the per-client limits.
@Suite struct ClientGroupTests {
    static func group(_ address: String, _ prefix: Int = 64) -> ClientGroup {
        ClientGroup(IPAddress(address)!, ipv6PrefixLength: prefix)
    }

    @Test func anIPv6AddressCountsByItsPrefix() {
        #expect(Self.group("2001:db8::1") == Self.group("2001:db8::2"))
        #expect(Self.group("2001:db8::1") == Self.group("2001:db8:0:0:ffff:ffff:ffff:ffff"))
        #expect(Self.group("2001:db8::1") != Self.group("2001:db8:0:1::1"), "the next /64")
        #expect(Self.group("2001:db8::1").description == "2001:db8::/64")
    }

    @Test(arguments: [
        // (a, b, prefix, same client)
        ("2001:db8:0:1::1", "2001:db8:0:2::1", 48, true),
        ("2001:db8:0:1::1", "2001:db8:1:1::1", 48, false),
        ("2001:db8::1", "2001:db8::2", 128, false),
        ("2001:db8::1", "2001:db8::1", 128, true),
        ("2001:db8::1:0", "2001:db8::1:ffff", 112, true),
        ("2001:db8::1:0", "2001:db8::2:0", 112, false),
        ("2001:db8::", "2001:db9::", 31, true),
        ("2001:db8::", "2001:db9::", 32, false),
        ("2001:db8::1", "a001:db8::1", 1, false),
        ("2001:db8::1", "7fff::1", 1, true),
        ("2001:db8::0", "2001:db8::1", 127, true),
        ("2001:db8::1", "2001:db8::2", 127, false),
        ("2001:db8:0:0:8000::", "2001:db8:0:0:7fff::", 65, false),
        ("2001:db8:0:0:8000::", "2001:db8:0:0:ffff::", 65, true),
    ])
    func prefixesOtherThan64(a: String, b: String, prefix: Int, same: Bool) {
        #expect((Self.group(a, prefix) == Self.group(b, prefix)) == same)
    }

    @Test func ipv4CountsPerAddressWhateverThePrefix() {
        #expect(Self.group("198.51.100.1", 1) != Self.group("198.51.100.2", 1))
        #expect(Self.group("198.51.100.1", 1) == Self.group("198.51.100.1", 128))
        #expect(Self.group("198.51.100.1").description == "198.51.100.1")
    }

    @Test func aMappedAddressIsItsIPv4Address() {
        #expect(Self.group("::ffff:198.51.100.1") == Self.group("198.51.100.1"))
        #expect(Self.group("::ffff:198.51.100.1") != Self.group("::ffff:198.51.100.2"), "not one /64 of mapped space")
    }

    @Test func ipv4AndIPv6WithTheSameBitsAreDifferentClients() {
        // 0.0.0.1 and ::1 both end in the bits 1; so does every /64 with a zero network part.
        #expect(Self.group("0.0.0.1", 128) != Self.group("::1", 128))
        #expect(Self.group("0.0.0.0", 96) != Self.group("::", 96))
    }

    @Test func aWholeAddressReadsAsTheAddress() {
        #expect(Self.group("2001:db8::7", 128).description == "2001:db8::7")
        #expect(Self.group("2001:db8:1:2:3:4:5:6", 48).description == "2001:db8:1::/48")
    }
}
