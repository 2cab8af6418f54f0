/// The located rows of one stretch of a feed, packed into a tree that never changes: the points sorted along a
/// Hilbert curve, cut into leaves of `fanout` points, and the leaves into nodes of `fanout` under a root. Each node
/// knows the box around its points and the first and last row among them, so a search can walk it best first in
/// feed order: it pops whatever may hold the lowest (or highest) row next, and a point once popped is the next
/// hit. A search costs the hits it returns and the nodes around them, not the rows of the run.
final class PackedRun: Sendable {
    static let fanout = 16

    /// The rows of the feed it covers; the unlocated ones among them are in no node.
    let rows: Range<Int>

    private let points: [MapPoint]
    private let pointRows: [Int32]
    /// One entry per node, level by level from the leaves up; `levelStarts[k]` is where level k + 1 begins
    /// (level 0 is the points).
    private let lows: [MapPoint]
    private let highs: [MapPoint]
    private let firstRows: [Int32]
    private let lastRows: [Int32]
    /// How many points are under each node, and the sums of their positions (`tally`'s clusters).
    private let counts: [Int32]
    private let longitudeSums: [Double]
    private let latitudeSums: [Double]
    private let levelStarts: [Int]

    /// A run over `rows`, of which `located` (in any order) are located.
    convenience init(rows: Range<Int>, located: [LocatedRow]) {
        let sorted = located.map { (key: HilbertCurve.position(of: $0.point), located: $0) }
            .sorted { ($0.key, $0.located.row) < ($1.key, $1.located.row) }
        self.init(rows: rows, inCurveOrder: sorted.map(\.located))
    }

    /// A run over `rows`, of which `located` are located, in the Hilbert curve's order already.
    private init(rows: Range<Int>, inCurveOrder located: [LocatedRow]) {
        self.rows = rows
        points = located.map(\.point)
        pointRows = located.map { Int32($0.row) }

        var lows: [MapPoint] = []
        var highs: [MapPoint] = []
        var firstRows: [Int32] = []
        var lastRows: [Int32] = []
        var counts: [Int32] = []
        var longitudeSums: [Double] = []
        var latitudeSums: [Double] = []
        var levelStarts: [Int] = [0]
        // Level 1 groups points; each level above groups the one below, until one node holds them all.
        var below = 0..<points.count
        var level = 1
        repeat {
            let start = lows.count
            for first in stride(from: below.lowerBound, to: below.upperBound, by: Self.fanout) {
                let children = first..<min(first + Self.fanout, below.upperBound)
                var low = MapPoint(longitude: .infinity, latitude: .infinity)
                var high = MapPoint(longitude: -.infinity, latitude: -.infinity)
                var firstRow = Int32.max
                var lastRow = Int32.min
                var count: Int32 = 0
                var longitudeSum = 0.0
                var latitudeSum = 0.0
                for child in children {
                    let (childLow, childHigh, childFirst, childLast) =
                        level == 1
                        ? (points[child], points[child], pointRows[child], pointRows[child])
                        : (lows[child], highs[child], firstRows[child], lastRows[child])
                    count += level == 1 ? 1 : counts[child]
                    longitudeSum += level == 1 ? points[child].longitude : longitudeSums[child]
                    latitudeSum += level == 1 ? points[child].latitude : latitudeSums[child]
                    low.longitude = min(low.longitude, childLow.longitude)
                    low.latitude = min(low.latitude, childLow.latitude)
                    high.longitude = max(high.longitude, childHigh.longitude)
                    high.latitude = max(high.latitude, childHigh.latitude)
                    firstRow = min(firstRow, childFirst)
                    lastRow = max(lastRow, childLast)
                }
                lows.append(low)
                highs.append(high)
                firstRows.append(firstRow)
                lastRows.append(lastRow)
                counts.append(count)
                longitudeSums.append(longitudeSum)
                latitudeSums.append(latitudeSum)
            }
            levelStarts.append(lows.count)
            below = start..<lows.count
            level += 1
        } while below.count > 1
        self.lows = lows
        self.highs = highs
        self.firstRows = firstRows
        self.lastRows = lastRows
        self.counts = counts
        self.longitudeSums = longitudeSums
        self.latitudeSums = latitudeSums
        self.levelStarts = levelStarts
    }

    /// The same run over `rows`, each point's row renumbered by `renumbered` (by old row; -1: the row is gone, and
    /// its point with it): the points stay in their order, so nothing is sorted again.
    func keeping(rows: Range<Int>, renumbered: [Int32]) -> PackedRun {
        var kept: [LocatedRow] = []
        kept.reserveCapacity(points.count)
        for index in points.indices {
            let row = renumbered[Int(pointRows[index])]
            if row >= 0 { kept.append(LocatedRow(point: points[index], row: Int(row))) }
        }
        return PackedRun(rows: rows, inCurveOrder: kept)
    }

    /// The located rows it holds.
    var located: [LocatedRow] {
        zip(points, pointRows).map { LocatedRow(point: $0, row: Int($1)) }
    }

    /// Counts its points into `counts`.
    func count(into counts: inout ClusterCounts) {
        for index in points.indices { counts.add(points[index], row: Int(pointRows[index])) }
    }

    /// Appends to `hits` the rows within `allowed` whose points lie in `box`, in feed order (newest first when
    /// `newestFirst`), until `hits` holds `limit`.
    func search(_ box: BoundingBox, in allowed: Range<Int>, newestFirst: Bool, limit: Int, into hits: inout [Int]) {
        guard !points.isEmpty, hits.count < limit else { return }
        let allowedFirst = Int32(clamping: allowed.lowerBound)
        let allowedEnd = Int32(clamping: allowed.upperBound)
        var queue = MinimumHeap()
        let rootLevel = levelStarts.count - 1
        considerNodes(levelStarts[rootLevel - 1]..<levelStarts[rootLevel], level: Int32(rootLevel))
        while hits.count < limit, let next = queue.pop() {
            let level = Int(next.level)
            if level == 0 {
                hits.append(Int(pointRows[next.index]))
            } else if level == 1 {
                considerPoints(children(of: next.index, level: level))
            } else {
                considerNodes(children(of: next.index, level: level), level: Int32(level - 1))
            }
        }

        func key(first: Int32, last: Int32) -> Int64 { newestFirst ? -Int64(last) : Int64(first) }

        func considerNodes(_ nodes: Range<Int>, level: Int32) {
            for node in nodes
            where lastRows[node] >= allowedFirst && firstRows[node] < allowedEnd
                && box.intersects(low: lows[node], high: highs[node])
            {
                queue.push(.init(key: key(first: firstRows[node], last: lastRows[node]), level: level, index: node))
            }
        }

        func considerPoints(_ indices: Range<Int>) {
            for index in indices where pointRows[index] >= allowedFirst && pointRows[index] < allowedEnd {
                let point = points[index]
                guard box.contains(longitude: point.longitude, latitude: point.latitude) else { continue }
                queue.push(.init(key: key(first: pointRows[index], last: pointRows[index]), level: 0, index: index))
            }
        }
    }

    /// Counts into `tally` the rows within `allowed` whose points lie in `box`, but those in cells the tally has
    /// counted already (`ClusterTally.count(from:inside:)`). A node wholly in the box, its rows all allowed and its
    /// box within one cell of the grid, is counted whole, without a look at its points; one wholly in cells counted
    /// already is passed over. The walk costs the cells on screen and the nodes along their edges, not the chatts in
    /// them.
    func tally(_ box: BoundingBox, in allowed: Range<Int>, into tally: inout ClusterTally) {
        guard !points.isEmpty else { return }
        let allowedFirst = Int32(clamping: allowed.lowerBound)
        let allowedEnd = Int32(clamping: allowed.upperBound)
        let rootLevel = levelStarts.count - 1
        var stack = (levelStarts[rootLevel - 1]..<levelStarts[rootLevel]).map { (node: $0, level: rootLevel) }
        while let (node, level) = stack.popLast() {
            guard lastRows[node] >= allowedFirst, firstRows[node] < allowedEnd,
                box.intersects(low: lows[node], high: highs[node])
            else { continue }
            let (low, high) = (lows[node], highs[node])
            let whole =
                firstRows[node] >= allowedFirst && lastRows[node] < allowedEnd && box.covers(low: low, high: high)
            if whole, tally.isCounted(low: low, high: high) { continue }
            if whole, counts[node] >= 2 {
                let cell = tally.cell(of: low)
                if cell == tally.cell(of: high) {
                    tally.addPacked(
                        cell: cell, count: Int(counts[node]), longitudeSum: longitudeSums[node],
                        latitudeSum: latitudeSums[node])
                    continue
                }
            }
            if level == 1, whole {
                let chatts = children(of: node, level: 1).lazy.map { (self.points[$0], Int(self.pointRows[$0])) }
                tally.addPacked(chatts, within: low, high)
            } else if level == 1 {
                for index in children(of: node, level: 1)
                where pointRows[index] >= allowedFirst && pointRows[index] < allowedEnd && box.contains(points[index])
                {
                    tally.addPacked(points[index], row: Int(pointRows[index]))
                }
            } else {
                stack += children(of: node, level: level).map { (node: $0, level: level - 1) }
            }
        }
    }

    /// The points (under a leaf, `level` 1) or nodes under `node` of `level`.
    private func children(of node: Int, level: Int) -> Range<Int> {
        let offset = node - levelStarts[level - 1]
        let below = level == 1 ? 0..<points.count : levelStarts[level - 2]..<levelStarts[level - 1]
        let first = below.lowerBound + offset * Self.fanout
        return first..<min(first + Self.fanout, below.upperBound)
    }
}

/// A binary min-heap of a search's candidates, by key.
private struct MinimumHeap {
    struct Entry {
        var key: Int64
        /// 0: a point; 1 and up: a node of that level.
        var level: Int32
        var index: Int
    }

    private var entries: [Entry] = []

    init() {
        entries.reserveCapacity(256)
    }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].key < entries[parent].key else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Entry? {
        guard let last = entries.popLast() else { return nil }
        guard !entries.isEmpty else { return last }
        let top = entries[0]
        entries[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { break }
            let right = left + 1
            let smaller = right < entries.count && entries[right].key < entries[left].key ? right : left
            guard entries[smaller].key < entries[parent].key else { break }
            entries.swapAt(parent, smaller)
            parent = smaller
        }
        return top
    }
}
