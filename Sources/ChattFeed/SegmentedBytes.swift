/// Bytes that only grow, kept as immutable segments that every version made from them shares: appending adds a
/// segment and never touches the ones before, so a version made earlier keeps exactly the segments it was made
/// with, a later one shares them, and the bytes are held once however many versions are alive. (Segments are
/// arrays, so ARC frees each one with the last version or response that holds it.)
///
/// Compaction: a new segment at least half as long as the one before it is merged into that one, and so on
/// towards the front, so segments more than double in length towards the front. Bytes added in pieces of at least
/// m bytes, n in all, then take at most about log2(n/m) segments, which keeps a response's write vector short; each
/// byte is copied at most about log1.5(n/m) times over its life, as its segment grows by half at every merge. A
/// merge makes a new array: versions made before it keep the segments it replaced until they go. A full read of
/// the store starts over from one segment. (Measured: bench/RESULTS.md, "Segmented feed bodies".)
struct SegmentedBytes: Sendable {
    /// The bytes in order; none is empty.
    private(set) var segments: [ArraySlice<UInt8>] = []
    /// Their total length.
    private(set) var count = 0

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
        while segments.count >= 2, segments[segments.count - 1].count * 2 >= segments[segments.count - 2].count {
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
