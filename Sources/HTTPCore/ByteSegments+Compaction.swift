/// Compaction, for bytes that only grow by appends (a cached feed's settled bytes, its gzip stream's output) and
/// whose every version is kept alive by whoever still sends it: a version made earlier keeps exactly the segments
/// it was made with, a later one shares them, and the bytes are held once however many versions are alive.
///
/// A new segment at least half as long as the one before it is merged into that one, and so on towards the
/// front, unless the merge would make a segment longer than `mergeLimit`. Below that length segments more than
/// double towards the front, so bytes added in pieces of at least m bytes take about log2(limit / m) segments,
/// plus one for each `mergeLimit` of bytes beyond (and the first segment); each byte is copied at most about
/// log1.5(limit / m) times. The limit bounds a merge's copy, which for a feed happens while a post's rows are
/// taken in (see `ChattFeed.append`), to about a millisecond. A merge makes a new array: versions made before
/// it keep the segments it replaced until they go. (Measured: bench/RESULTS.md, "Segmented feed bodies".)
extension ByteSegments {
    /// The longest segment a merge makes: 4 MiB, copied in about a millisecond here.
    public static let mergeLimit = 4 << 20

    /// Adds `bytes` as a segment of their own, merged with the ones before it as the rule above says, but never
    /// with the first `kept` segments (bytes shared with another value, which a merge would copy again and again).
    public mutating func append(compacting bytes: [UInt8], keeping kept: Int = 0) {
        guard !bytes.isEmpty else { return }
        append(bytes[...])
        while segments.count - kept >= 2 {
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
