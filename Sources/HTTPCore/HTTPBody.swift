#if canImport(Glibc)
import Glibc
#endif

/// A response body: immutable byte segments sent one after another. A body that grows by versions (a cached feed)
/// shares its older segments with the versions before it, and the server queues each segment where it lies, so a
/// body is copied neither per version nor per connection. Ordinary responses are one segment.
public struct HTTPBody: Sendable {
    /// The bytes, in order; none is empty.
    public let segments: [ArraySlice<UInt8>]
    /// The number of bytes.
    public let count: Int

    /// No bytes.
    public init() {
        segments = []
        count = 0
    }

    /// `bytes` as one segment, shared with the array (never copied).
    public init(_ bytes: [UInt8]) {
        self.init(segments: [bytes[...]])
    }

    /// The segments one after another.
    public init(segments: [ArraySlice<UInt8>]) {
        let kept = segments.allSatisfy { !$0.isEmpty } ? segments : segments.filter { !$0.isEmpty }
        self.segments = kept
        count = kept.reduce(0) { $0 + $1.count }
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

    /// The bytes copied into one array, for whoever needs them contiguous.
    public var bytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        for segment in segments { bytes.append(contentsOf: segment) }
        return bytes
    }
}

/// Byte by byte, for whoever reads a body as bytes (tests, `String(decoding:as:)`); the server sends segments.
extension HTTPBody: Collection {
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
extension HTTPBody: Equatable {
    public static func == (lhs: HTTPBody, rhs: HTTPBody) -> Bool {
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
