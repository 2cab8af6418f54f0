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
    /// The rows in runs, counted in cells for cluster answers at low zooms.
    private var counts = ClusterCounts()

    public init() {}

    /// Rows looked through one by one at the end a search starts from, before its runs: a box crowded with hits
    /// (a campus) has its answer there, sooner than a walk through runs whose every node holds some.
    public static let window = 4096

    /// The most rows a search looks through one by one, when the hits it found in them say it will have the ones
    /// it wants before then: for the newest 500, a box holding about 0.5 % of the rows or more, where looking
    /// through them costs less than a walk through the runs (bench/viewport-index, "newest 500 by selectivity";
    /// bench/RESULTS.md, "Looking through rows").
    public static let mostLookedThrough = 131_072

    /// A search for the rows of `allowed` in `box`, in a feed of `rowCount` rows whose located rows `read` gives
    /// (those of a range, or those of a range in a box, in feed order); `newest` says which end it starts from and
    /// `wanted` how many hits it will be asked for (its answers are right for any number; this one says how far
    /// looking through rows one by one pays). Packs a new run first when there are enough new rows. The search
    /// shares the runs, and may be used outside whatever guards this index.
    public mutating func search(
        _ box: BoundingBox, in allowed: Range<Int>, newest: Bool, wanted: Int = 500, rowCount: Int,
        reading read: (_ rows: Range<Int>, _ inside: BoundingBox?) -> [LocatedRow]
    ) -> ViewportSearch {
        packNewRows(upTo: rowCount, reading: read)
        let inRuns = allowed.clamped(to: 0..<packed)
        let unpacked = allowed.clamped(to: packed..<max(packed, allowed.upperBound))
        let unpackedHits = read(unpacked, box).map(\.row)
        // Rows looked through from the end the search starts at, a block at a time, while the hits in them say
        // the wanted ones are near; the hits of each block in the order looked at.
        var looked = newest ? inRuns.upperBound..<inRuns.upperBound : inRuns.lowerBound..<inRuns.lowerBound
        var blocks: [[Int]] = []
        var (hits, found) = (0, newest ? unpackedHits.count : 0)
        while found < wanted, looked.count < inRuns.count {
            var step = Self.window
            if !looked.isEmpty {
                // The rows still to look through at the density seen so far, and a quarter more.
                guard hits > 0 else { break }
                let projected = Double(wanted - found) * Double(looked.count) / Double(hits) * 1.25
                guard Double(looked.count) + projected <= Double(Self.mostLookedThrough) else { break }
                step = max(Self.window, Int(projected))
            }
            let block =
                newest
                ? max(inRuns.lowerBound, looked.lowerBound - step)..<looked.lowerBound
                : looked.upperBound..<min(inRuns.upperBound, looked.upperBound + step)
            let blockHits = read(block, box).map(\.row)
            blocks.append(blockHits)
            hits += blockHits.count
            found += blockHits.count
            looked = newest ? block.lowerBound..<looked.upperBound : looked.lowerBound..<block.upperBound
        }
        let lookedHits = Array((newest ? blocks.reversed() : blocks).joined())
        return ViewportSearch(
            box: box, runs: runs,
            inRuns: newest ? inRuns.lowerBound..<looked.lowerBound : looked.upperBound..<inRuns.upperBound,
            before: newest ? [] : lookedHits, after: newest ? lookedHits + unpackedHits : unpackedHits)
    }

    /// The clusters of the rows of `allowed` in `box` on `grid`, made as `search` makes its search: the rows not in
    /// runs are read under whatever guards this index, the runs walked by the returned value.
    public mutating func clusters(
        _ box: BoundingBox, in allowed: Range<Int>, on grid: ClusterGrid, rowCount: Int,
        reading read: (_ rows: Range<Int>, _ inside: BoundingBox?) -> [LocatedRow]
    ) -> ViewportClusters {
        packNewRows(upTo: rowCount, reading: read)
        let unpacked = allowed.clamped(to: packed..<max(packed, allowed.upperBound))
        let inRuns = allowed.clamped(to: 0..<packed)
        // The counts are of every packed row: an answer of fewer (an older version) walks its runs.
        let countsApply = grid.zoom <= ClusterCounts.zoom && inRuns.count == packed
        return ViewportClusters(
            box: box, grid: grid, runs: runs, inRuns: inRuns, unpacked: read(unpacked, box),
            counts: countsApply ? counts : nil)
    }

    /// This index of a feed with the rows `removed` (rising) taken out and the rest renumbered from 0 in order, as a
    /// removal leaves a feed: its runs keep their points' order, so this costs a pass over them, not the sorts of a
    /// new packing (bench/viewport-index measures both).
    public func keeping(removing removed: [Int]) -> ViewportIndex {
        guard !removed.isEmpty else { return self }
        // Each packed row's new number, or -1 for a removed one; one more entry for the end.
        var renumbered = [Int32](repeating: 0, count: packed + 1)
        var gone = 0
        for row in 0...packed {
            if gone < removed.count, removed[gone] == row, row < packed {
                renumbered[row] = -1
                gone += 1
            } else {
                renumbered[row] = Int32(row - gone)
            }
        }
        // A removed row's place in a range: the number of the next row kept.
        func start(_ row: Int) -> Int {
            var row = row
            while renumbered[row] < 0 { row += 1 }
            return Int(renumbered[row])
        }
        var index = ViewportIndex()
        index.runs = runs.map { run in
            run.keeping(rows: start(run.rows.lowerBound)..<start(run.rows.upperBound), renumbered: renumbered)
        }
        index.packed = Int(renumbered[packed])
        for run in index.runs { run.count(into: &index.counts) }
        index.counts.summarize()
        return index
    }

    /// Packs rows `packed..<rowCount`, located as `read` says, into a new run when there are at least `smallestRun`
    /// of them (searches do this first; a full read of the store asks it at once, so its first search need not).
    public mutating func packNewRows(
        upTo rowCount: Int, reading read: (_ rows: Range<Int>, _ inside: BoundingBox?) -> [LocatedRow]
    ) {
        if rowCount - packed >= Self.smallestRun { pack(read(packed..<rowCount, nil), upTo: rowCount) }
    }

    /// Makes a run of rows `packed..<end`, of which `located` (in any order) are located, and merges runs until
    /// their sizes quadruple again.
    private mutating func pack(_ located: [LocatedRow], upTo end: Int) {
        runs.append(PackedRun(rows: packed..<end, located: located))
        for row in located { counts.add(row.point, row: row.row) }
        counts.summarize()
        packed = end
        while runs.count >= 2, runs[runs.count - 2].rows.count < 4 * runs[runs.count - 1].rows.count {
            let newer = runs.removeLast()
            let older = runs.removeLast()
            runs.append(PackedRun(
                rows: older.rows.lowerBound..<newer.rows.upperBound, located: older.located + newer.located))
        }
    }
}

/// One search of a `ViewportIndex`: its runs, and the hits among the rows looked through, before and after the
/// rows it searches in runs.
public struct ViewportSearch: Sendable {
    let box: BoundingBox
    let runs: [PackedRun]
    /// The rows searched in runs.
    let inRuns: Range<Int>
    /// Hits before `inRuns`, in feed order.
    let before: [Int]
    /// Hits after `inRuns`, in feed order.
    let after: [Int]

    /// The first `limit` hits in feed order.
    public func first(_ limit: Int) -> [Int] {
        var hits = Array(before.prefix(limit))
        for run in runs where run.rows.overlaps(inRuns) {
            guard hits.count < limit else { return hits }
            run.search(box, in: inRuns, newestFirst: false, limit: limit, into: &hits)
        }
        return hits + after.prefix(limit - hits.count)
    }

    /// The last `limit` hits, in feed order.
    public func last(_ limit: Int) -> [Int] {
        var hits = Array(after.suffix(limit).reversed())
        for run in runs.reversed() where run.rows.overlaps(inRuns) {
            guard hits.count < limit else { break }
            run.search(box, in: inRuns, newestFirst: true, limit: limit, into: &hits)
        }
        return before.suffix(limit - hits.count) + hits.reversed()
    }
}

/// One answer of `ViewportIndex.clusters`: its runs, and the located rows in its box among those not yet in one.
public struct ViewportClusters: Sendable {
    let box: BoundingBox
    let grid: ClusterGrid
    let runs: [PackedRun]
    let inRuns: Range<Int>
    let unpacked: [LocatedRow]
    /// The counts of every row in runs, when the grid is coarse enough for them.
    let counts: ClusterCounts?

    /// The cells of every row in the box, counted once.
    public func tally() -> ClusterTally {
        var tally = ClusterTally(grid: grid, box: box)
        if let counts { tally.count(from: counts, inside: box) }
        for run in runs where run.rows.overlaps(inRuns) {
            run.tally(box, in: inRuns, into: &tally)
        }
        for located in unpacked { tally.add(located.point, row: located.row) }
        return tally
    }
}
