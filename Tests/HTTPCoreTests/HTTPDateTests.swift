import HTTPCore
import Testing

/// IMF-fixdate formatting (RFC 9110 §5.6.7) at known instants.
@Suite struct HTTPDateTests {
    @Test(arguments: [
        (784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT"),  // RFC 9110's own example
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (1_709_210_096, "Thu, 29 Feb 2024 12:34:56 GMT"),  // leap day
        (951_868_800, "Wed, 01 Mar 2000 00:00:00 GMT"),  // the day after a 400-year leap day
        (1_795_996_799, "Sun, 29 Nov 2026 23:59:59 GMT"),
        (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
    ])
    func formatsKnownInstants(_ seconds: Int, _ expected: String) {
        #expect(HTTPDate.format(secondsSince1970: seconds) == expected)
    }
}
