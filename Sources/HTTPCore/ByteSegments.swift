#if canImport(Glibc)
import Glibc
#endif

/// Bytes kept as immutable segments, one after another: a response body, a cached feed's settled bytes, a gzip
/// stream's output. Appending a segment never copies it or touches the ones before, so values made from one
/// another (the versions of a feed, slices of one) share their storage, and the server queues each segment where
/// it lies. (Segments are array slices, so ARC frees each one with the last value that holds it.)
public struct ByteSegments: Sendable {
    /// The bytes, in order; none is empty. (Set only here and by `append(compacting:)`.)
    public internal(set) var segments: [ArraySlice<UInt8>]
    /// The number of bytes.
    public private(set) var count: Int

    /// No bytes.
    public init() {
        segments = []
        count = 0
    }

    /// `bytes` as one segment, shared with the array (never copied).
    public init(_ bytes: [UInt8]) {
        self.init(bytes[...])
    }

    /// `bytes` as one segment, shared with their array (never copied).
    public init(_ bytes: ArraySlice<UInt8>) {
        segments = bytes.isEmpty ? [] : [bytes]
        count = bytes.count
    }

    /// The segments one after another.
    public init(segments: [ArraySlice<UInt8>]) {
        let kept = segments.allSatisfy { !$0.isEmpty } ? segments : segments.filter { !$0.isEmpty }
        self.segments = kept
        count = kept.reduce(0) { $0 + $1.count }
    }

    /// Adds `segment` after the others, shared rather than copied; an empty one adds nothing.
    public mutating func append(_ segment: ArraySlice<UInt8>) {
        guard !segment.isEmpty else { return }
        segments.append(segment)
        count += segment.count
    }

    /// Calls `visit` with the bytes at offsets `range` (within `0..<count`), as slices of the segments, in order.
    public func forEachSlice(in range: Range<Int>, _ visit: (ArraySlice<UInt8>) throws -> Void) rethrows {
        guard !range.isEmpty else { return }
        var start = 0
        for segment in segments {
            let end = start + segment.count
            defer { start = end }
            guard end > range.lowerBound else { continue }
            guard start < range.upperBound else { return }
            let from = segment.startIndex + Swift.max(0, range.lowerBound - start)
            let to = segment.startIndex + Swift.min(segment.count, range.upperBound - start)
            try visit(segment[from..<to])
        }
    }

    /// Calls `visit` with the segment holding the byte at each of `offsets` (rising, within `0..<count`) and that
    /// byte's index in the segment: one walk forward, however many offsets.
    public func forEachSegment(
        holding offsets: [Int], _ visit: (_ segment: ArraySlice<UInt8>, _ index: Int) throws -> Void
    ) rethrows {
        var current = 0
        var start = 0  // the offset of segments[current]'s first byte
        for offset in offsets {
            while offset >= start + segments[current].count {
                start += segments[current].count
                current += 1
            }
            try visit(segments[current], segments[current].startIndex + offset - start)
        }
    }

    /// The bytes copied into one array, for whoever needs them contiguous.
    public var bytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        for segment in segments { bytes.append(contentsOf: segment) }
        return bytes
    }
}

/// Byte by byte, for whoever reads the bytes one at a time (tests, `String(decoding:as:)`); the server sends
/// segments.
extension ByteSegments: Collection {
    /// A segment, and a position in it (an index of that slice); the end is one past the last segment.
    public struct Index: Comparable, Sendable {
        fileprivate let segment: Int
        fileprivate let position: Int

        public static func < (lhs: Index, rhs: Index) -> Bool {
            (lhs.segment, lhs.position) < (rhs.segment, rhs.position)
        }
    }

    public var startIndex: Index { Index(segment: 0, position: segments.first?.startIndex ?? 0) }
    public var endIndex: Index { Index(segment: segments.count, position: 0) }
    public var isEmpty: Bool { count == 0 }

    public subscript(index: Index) -> UInt8 {
        segments[index.segment][index.position]
    }

    public func index(after index: Index) -> Index {
        if index.position + 1 < segments[index.segment].endIndex {
            return Index(segment: index.segment, position: index.position + 1)
        }
        let next = index.segment + 1
        return next < segments.count ? Index(segment: next, position: segments[next].startIndex) : endIndex
    }

    public func withContiguousStorageIfAvailable<Result>(
        _ body: (UnsafeBufferPointer<UInt8>) throws -> Result
    ) rethrows -> Result? {
        switch segments.count {
        case 0: try body(UnsafeBufferPointer(start: nil, count: 0))
        case 1: try segments[0].withUnsafeBufferPointer(body)
        default: nil
        }
    }
}

/// Equal when the bytes are, however they are split into segments.
extension ByteSegments: Equatable {
    public static func == (lhs: ByteSegments, rhs: ByteSegments) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var offset = 0
        for segment in lhs.segments {
            var equal = true
            segment.withUnsafeBytes { mine in
                var position = 0
                rhs.forEachSlice(in: offset..<(offset + segment.count)) { theirs in
                    theirs.withUnsafeBytes { theirs in
                        equal = equal && memcmp(mine.baseAddress! + position, theirs.baseAddress!, theirs.count) == 0
                        position += theirs.count
                    }
                }
            }
            guard equal else { return false }
            offset += segment.count
        }
        return true
    }
}
