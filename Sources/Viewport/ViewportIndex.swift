/// Which rows of a feed lie in a box: every row's location in feed order, and runs of them packed into trees
/// (`PackedRun`) a search walks in feed order. Rows only ever join at the end; the last rows, fewer than
/// `smallestRun`, are looked through one by one, and once there are that many they become a run. Runs are kept
/// in sizes that at least quadruple from the newest to the oldest (the last two merge into one while they do
/// not), so a feed of n rows has about log₄(n / smallestRun) runs, and every row is packed again only that often.
public struct ViewportIndex: Sendable {
    /// Rows left to be looked through before they make a run.
    public static let smallestRun = 1024

    private var longitudes: [Double] = []
    private var latitudes: [Double] = []
    /// Over rows 0..<`indexed`, oldest first.
    private var runs: [PackedRun] = []
    private var indexed = 0

    public init() {}

    /// The rows it knows.
    public var count: Int { longitudes.count }

    /// Takes in the next row, located at `point` (nil: not located).
    public mutating func append(_ point: MapPoint?) {
        longitudes.append(point?.longitude ?? .nan)
        latitudes.append(point?.latitude ?? .nan)
    }

    /// Where row `row` is, if located.
    public func location(of row: Int) -> MapPoint? {
        longitudes[row].isNaN ? nil : MapPoint(longitude: longitudes[row], latitude: latitudes[row])
    }

    /// An index of the rows at `kept` (rising) alone, numbered from 0 in that order; its runs are made again.
    public func keeping(_ kept: some Sequence<Int>) -> ViewportIndex {
        var index = ViewportIndex()
        for row in kept { index.append(location(of: row)) }
        return index
    }

    /// A search for the rows of `allowed` (within `0..<count`) in `box`: the rows not yet in a run are looked
    /// through now (the new runs made first), the runs searched by the returned value, which shares them and may
    /// be used outside whatever guards this index.
    public mutating func search(_ box: BoundingBox, in allowed: Range<Int>) -> ViewportSearch {
        packRuns()
        var unpacked: [Int] = []
        for row in max(indexed, allowed.lowerBound)..<max(indexed, allowed.upperBound)
        where box.contains(longitude: longitudes[row], latitude: latitudes[row]) {
            unpacked.append(row)
        }
        return ViewportSearch(box: box, allowed: allowed, runs: runs, unpacked: unpacked)
    }

    private mutating func packRuns() {
        guard count - indexed >= Self.smallestRun else { return }
        runs.append(run(over: indexed..<count))
        indexed = count
        while runs.count >= 2, runs[runs.count - 2].rows.count < 4 * runs[runs.count - 1].rows.count {
            let newer = runs.removeLast()
            let older = runs.removeLast()
            runs.append(run(over: older.rows.lowerBound..<newer.rows.upperBound))
        }
    }

    private func run(over rows: Range<Int>) -> PackedRun {
        PackedRun(rows: rows) { location(of: $0) }
    }
}

/// The rest of one search of a `ViewportIndex`: its runs, and the hits among the rows not yet in one.
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
