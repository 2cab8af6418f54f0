/// Which rows of a feed lie in a box: runs of the feed's located rows packed into trees (`PackedRun`) that a
/// search walks in feed order. Rows only ever join at the end; the newest, fewer than `smallestRun`, are looked
/// through one by one (`RowLocations`), and once there are that many they make a run. Runs are kept in sizes that
/// at least quadruple from the newest to the oldest (the last two merge while they do not), so a feed of n rows
/// has about log₄(n / smallestRun) runs, and a row is packed again only that many times.
public struct ViewportIndex: Sendable {
    /// Rows left to be looked through before they make a run.
    public static let smallestRun = 1024

    /// Over rows 0..<`packed`, oldest first.
    private var runs: [PackedRun] = []
    /// The rows in runs.
    public private(set) var packed = 0

    public init() {}

    /// A search for the rows of `allowed` in `box`, in a feed of `rowCount` rows whose located rows `read` gives
    /// (those of a range, or those of a range in a box, in feed order). Packs a new run first when there are
    /// enough new rows. The search shares the runs, and may be used outside whatever guards this index.
    public mutating func search(
        _ box: BoundingBox, in allowed: Range<Int>, rowCount: Int,
        reading read: (_ rows: Range<Int>, _ inside: BoundingBox?) -> [LocatedRow]
    ) -> ViewportSearch {
        if rowCount - packed >= Self.smallestRun { pack(read(packed..<rowCount, nil), upTo: rowCount) }
        let from = max(packed, allowed.lowerBound)
        let unpacked = read(from..<max(from, allowed.upperBound), box)
        return ViewportSearch(box: box, allowed: allowed, runs: runs, unpacked: unpacked.map(\.row))
    }

    /// Makes a run of rows `packed..<end`, of which `located` (in any order) are located, and merges runs until
    /// their sizes quadruple again.
    private mutating func pack(_ located: [LocatedRow], upTo end: Int) {
        runs.append(PackedRun(rows: packed..<end, located: located))
        packed = end
        while runs.count >= 2, runs[runs.count - 2].rows.count < 4 * runs[runs.count - 1].rows.count {
            let newer = runs.removeLast()
            let older = runs.removeLast()
            runs.append(PackedRun(
                rows: older.rows.lowerBound..<newer.rows.upperBound, located: older.located + newer.located))
        }
    }
}

/// One search of a `ViewportIndex`: its runs, and the hits among the rows not yet in one.
public struct ViewportSearch: Sendable {
    let box: BoundingBox
    let allowed: Range<Int>
    let runs: [PackedRun]
    /// Hits among the rows after the runs, in feed order.
    let unpacked: [Int]

    /// The first `limit` hits in feed order.
    public func first(_ limit: Int) -> [Int] {
        var hits: [Int] = []
        for run in runs where run.rows.overlaps(allowed) {
            run.search(box, in: allowed, newestFirst: false, limit: limit, into: &hits)
            if hits.count >= limit { return hits }
        }
        hits += unpacked.prefix(limit - hits.count)
        return hits
    }

    /// The last `limit` hits, in feed order.
    public func last(_ limit: Int) -> [Int] {
        var hits = Array(unpacked.suffix(limit).reversed())
        for run in runs.reversed() where run.rows.overlaps(allowed) {
            guard hits.count < limit else { break }
            run.search(box, in: allowed, newestFirst: true, limit: limit, into: &hits)
        }
        return hits.reversed()
    }
}
