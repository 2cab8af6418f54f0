import HTTPCore
import Testing

/// `Accept-Encoding` lists with qvalues (RFC 9110 §12.5.3, §12.4.2).
@Suite struct AcceptEncodingTests {
    private func quality(_ coding: String, _ values: String...) -> Int {
        AcceptEncoding(fieldValues: values).quality(of: coding)
    }

    @Test func whatTheIOSClientSends() {
        #expect(quality("gzip", "gzip, deflate, br") == 1000)
        #expect(quality("br", "br;q=1.0, gzip;q=0.9, *;q=0.1") == 1000)
        #expect(quality("gzip", "br;q=1.0, gzip;q=0.9, *;q=0.1") == 900)
    }

    @Test func codingsCompareCaseInsensitivelyAndXGzipIsGzip() {
        #expect(quality("gzip", "GZip") == 1000)
        #expect(quality("gzip", "x-gzip;q=0.5") == 500)
        #expect(quality("gzip", "identity") == 0)
    }

    @Test func gzipExcludedByAZeroWeight() {
        #expect(quality("gzip", "gzip;q=0") == 0)
        #expect(quality("gzip", "gzip;q=0.000, *") == 0)
        #expect(quality("gzip", "gzip ; Q=0") == 0)
    }

    @Test func starCoversWhatIsNotListed() {
        #expect(quality("gzip", "*") == 1000)
        #expect(quality("gzip", "*;q=0.3") == 300)
        #expect(quality("gzip", "deflate, *;q=0") == 0)
    }

    @Test func identityIsAcceptableUnlessExcluded() {
        #expect(quality("identity", "gzip") == 1000)
        #expect(quality("identity") == 1000)
        #expect(quality("identity", "identity;q=0, gzip") == 0)
        #expect(quality("identity", "*;q=0") == 0)
        #expect(quality("identity", "*;q=0, identity;q=0.5") == 500)
    }

    @Test func anEmptyFieldAcceptsNoCoding() {
        #expect(quality("gzip", "") == 0)
        #expect(AcceptEncoding(fieldValues: [""]).entries.isEmpty)
    }

    @Test func linesAreOneListAndTheFirstListingCounts() {
        #expect(quality("gzip", "deflate", "gzip;q=0.2") == 200)
        #expect(quality("gzip", "gzip;q=0.2, gzip") == 200)
    }

    @Test(arguments: [
        ("0", 0), ("1", 1000), ("0.", 0), ("1.", 1000), ("0.5", 500), ("0.05", 50), ("0.001", 1), ("1.000", 1000),
        ("0.999", 999),
    ])
    func validQValues(_ text: String, _ expected: Int) {
        #expect(quality("gzip", "gzip;q=" + text) == expected)
    }

    @Test(arguments: ["2", "1.5", "1.001", "0.0001", ".5", "-0", "", "0.5x", " ", "1.0000"])
    func malformedQValuesDropTheEntry(_ text: String) {
        #expect(quality("gzip", "gzip;q=" + text) == 0, "gzip;q=\(text)")
        #expect(quality("gzip", "*;q=0.7, gzip;q=" + text) == 700, "falls back to *")
    }

    @Test(arguments: ["gzip;level=1", "gzip;", "gzip q=1", "gzip;q", ";q=1", "gz\u{E9}p", "\"gzip\""])
    func malformedElementsAreSkippedAndTheRestKept(_ element: String) {
        let parsed = AcceptEncoding(fieldValues: [element + ", br;q=0.5"])
        #expect(parsed.entries == [AcceptEncoding.Entry(coding: "br", quality: 500)], "\(element)")
    }
}
