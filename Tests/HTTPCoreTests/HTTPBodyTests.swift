import HTTPCore
import Testing

/// `HTTPBody`: bytes in shared segments, read as one run of bytes.
@Suite struct HTTPBodyTests {
    /// 0, 1, 2, … split into segments of these sizes.
    static func body(_ sizes: [Int]) -> (body: HTTPBody, bytes: [UInt8]) {
        let bytes = (0..<sizes.reduce(0, +)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var segments: [ArraySlice<UInt8>] = []
        var start = 0
        for size in sizes {
            segments.append(bytes[start..<(start + size)])
            start += size
        }
        return (HTTPBody(segments: segments), bytes)
    }

    @Test func segmentsReadAsOneRunOfBytesAndEmptyOnesAreDropped() {
        let (body, bytes) = Self.body([3, 0, 1, 5, 0])
        #expect(body.count == 9 && body.segments.map(\.count) == [3, 1, 5])
        #expect(Array(body) == bytes && body.bytes == bytes)
        #expect(HTTPBody(segments: [[], []]).isEmpty && Array(HTTPBody()) == [])
        #expect(String(decoding: HTTPBody(Array("{}".utf8)), as: UTF8.self) == "{}")
    }

    @Test func bodiesAreEqualWhenTheirBytesAreHoweverTheyAreSplit() {
        #expect(Self.body([4, 4]).body == Self.body([1, 6, 1]).body)
        #expect(Self.body([4, 4]).body == HTTPBody(Self.body([8]).bytes))
        #expect(Self.body([4, 4]).body != Self.body([4, 3]).body)
        var other = Self.body([8]).bytes
        other[5] ^= 1
        #expect(Self.body([4, 4]).body != HTTPBody(other))
    }

    @Test func everyRangeIsVisitedAsSlicesOfTheSegmentsInOrder() {
        let (body, bytes) = Self.body([3, 1, 5, 2])
        for start in 0...bytes.count {
            for end in start...bytes.count {
                var seen: [UInt8] = []
                var slices = 0
                body.forEachSlice(in: start..<end) {
                    #expect(!$0.isEmpty)
                    seen += $0
                    slices += 1
                }
                #expect(seen == Array(bytes[start..<end]), "\(start)..<\(end)")
                #expect(slices <= 4)
            }
        }
    }

    @Test func slicesShareTheSegmentsStorage() {
        let bytes = Array(repeating: UInt8(1), count: 100)
        let body = HTTPBody(segments: [bytes[0..<50], bytes[50...]])
        var addresses: [UnsafePointer<UInt8>?] = []
        body.forEachSlice(in: 40..<60) { slice in addresses.append(slice.withUnsafeBufferPointer { $0.baseAddress }) }
        let base = bytes.withUnsafeBufferPointer { $0.baseAddress! }
        #expect(addresses == [base + 40, base + 50])
    }
}
