import HTTPCore
import Testing

/// `ByteSegments` (and so `HTTPBody`): bytes in shared segments, read as one run of bytes.
@Suite struct ByteSegmentsTests {
    /// 0, 1, 2, … split into segments of these sizes.
    static func segments(_ sizes: [Int]) -> (segments: ByteSegments, bytes: [UInt8]) {
        let bytes = (0..<sizes.reduce(0, +)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var segments: [ArraySlice<UInt8>] = []
        var start = 0
        for size in sizes {
            segments.append(bytes[start..<(start + size)])
            start += size
        }
        return (ByteSegments(segments: segments), bytes)
    }

    static func address(_ slice: ArraySlice<UInt8>) -> UnsafePointer<UInt8>? {
        slice.withUnsafeBufferPointer { $0.baseAddress }
    }

    @Test func segmentsReadAsOneRunOfBytesAndEmptyOnesAreDropped() {
        let (segments, bytes) = Self.segments([3, 0, 1, 5, 0])
        #expect(segments.count == 9 && segments.segments.map(\.count) == [3, 1, 5])
        #expect(Array(segments) == bytes && segments.bytes == bytes)
        #expect(String(decoding: HTTPBody(Array("{}".utf8)), as: UTF8.self) == "{}")
    }

    @Test func emptyHasNoSegmentsHoweverItIsMade() {
        let empties = [ByteSegments(), ByteSegments([]), ByteSegments([UInt8]()[...]), ByteSegments(segments: [[], []])]
        for empty in empties {
            #expect(empty.isEmpty && empty.count == 0 && empty.segments.isEmpty)
            #expect(Array(empty) == [] && empty.bytes == [] && empty == ByteSegments())
            var visited = 0
            empty.forEachSlice(in: 0..<0) { _ in visited += 1 }
            #expect(visited == 0)
        }
    }

    @Test func appendingSharesEachSegmentAndCountsItsBytes() {
        let first = Array("[first".utf8), second = Array(",second]".utf8)
        var segments = ByteSegments(first)
        let before = segments
        segments.append(second[...])
        segments.append([][...])
        #expect(segments.count == first.count + second.count && segments.segments.count == 2)
        #expect(segments.bytes == first + second)
        #expect(segments.segments.map(Self.address) == [Self.address(first[...]), Self.address(second[...])])
        #expect(before.bytes == first && before.segments.count == 1, "a value appended to is not changed for others")
    }

    @Test func segmentsAreEqualWhenTheirBytesAreHoweverTheyAreSplit() {
        #expect(Self.segments([4, 4]).segments == Self.segments([1, 6, 1]).segments)
        #expect(Self.segments([4, 4]).segments == ByteSegments(Self.segments([8]).bytes))
        #expect(Self.segments([4, 4]).segments != Self.segments([4, 3]).segments)
        var other = Self.segments([8]).bytes
        other[5] ^= 1
        #expect(Self.segments([4, 4]).segments != ByteSegments(other))
    }

    @Test func everyRangeIsVisitedAsSlicesOfTheSegmentsInOrder() {
        let (segments, bytes) = Self.segments([3, 1, 5, 2])
        for start in 0...bytes.count {
            for end in start...bytes.count {
                var slice = ByteSegments()
                segments.forEachSlice(in: start..<end) {
                    #expect(!$0.isEmpty)
                    slice.append($0)
                }
                #expect(slice.bytes == Array(bytes[start..<end]), "\(start)..<\(end)")
                #expect(slice.count == end - start && slice.segments.count <= 4)
            }
        }
    }

    @Test func slicesShareTheSegmentsStorage() {
        let bytes = Array(repeating: UInt8(1), count: 100)
        let segments = ByteSegments(segments: [bytes[0..<50], bytes[50...]])
        var addresses: [UnsafePointer<UInt8>?] = []
        segments.forEachSlice(in: 40..<60) { addresses.append(Self.address($0)) }
        let base = bytes.withUnsafeBufferPointer { $0.baseAddress! }
        #expect(addresses == [base + 40, base + 50])
    }

    @Test func eachOffsetIsFoundInTheSegmentHoldingIt() {
        let (segments, bytes) = Self.segments([3, 1, 5, 2])
        for offsets in [Array(0..<bytes.count), [0, 3, 4, 9], [2, 2, 8, 10], [10], []] {
            var found: [UInt8] = []
            segments.forEachSegment(holding: offsets) { segment, index in
                #expect(segment.indices.contains(index))
                found.append(segment[index])
            }
            #expect(found == offsets.map { bytes[$0] }, "\(offsets)")
        }
    }
}
