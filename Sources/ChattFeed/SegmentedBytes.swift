/// Bytes that only grow, kept as immutable segments that every version made from them shares: appending adds a
/// segment and never touches the ones before, so a version made earlier keeps exactly the segments it was made
/// with, a later one shares them, and the bytes are held once however many versions are alive. (Segments are
/// arrays, so ARC frees each one with the last version or response that holds it.)
///
/// Compaction: a new segment at least half as long as the one before it is merged into that one, and so on
/// towards the front, unless the merge would make a segment longer than `mergeLimit`. Below that length segments
/// more than double towards the front, so bytes added in pieces of at least m bytes take about log2(limit / m)
/// segments, plus one for each `mergeLimit` of bytes beyond (and the full read's segment); each byte is copied at
/// most about log1.5(limit / m) times. The limit bounds a merge's copy, which happens while a post's rows are
/// taken in under the feed cache's lock, to about a millisecond. A merge makes a new array: versions made before
/// it keep the segments it replaced until they go. A full read of the store starts over from one segment.
/// (Measured: bench/RESULTS.md, "Segmented feed bodies".)
struct SegmentedBytes: Sendable {
    /// The bytes in order; none is empty.
    private(set) var segments: [ArraySlice<UInt8>] = []
    /// Their total length.
    private(set) var count = 0

    /// The longest segment a merge makes: 4 MiB, copied in about a millisecond here.
    static let mergeLimit = 4 << 20

    /// No bytes.
    init() {}

    /// `first` as the first segment, shared rather than copied.
    init(_ first: ArraySlice<UInt8>) {
        guard !first.isEmpty else { return }
        segments = [first]
        count = first.count
    }

    /// Adds `bytes` as a segment of their own, merged with the ones before it as the rule above says.
    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        segments.append(bytes[...])
        count += bytes.count
        while segments.count >= 2 {
            let newest = segments[segments.count - 1].count, previous = segments[segments.count - 2].count
            guard newest * 2 >= previous, newest + previous <= Self.mergeLimit else { return }
            let last = segments.removeLast()
            let before = segments.removeLast()
            var merged: [UInt8] = []
            merged.reserveCapacity(before.count + last.count)
            merged.append(contentsOf: before)
            merged.append(contentsOf: last)
            segments.append(merged[...])
        }
    }
}
