import Testing

@testable import Viewport

/// Locations and their index, kept side by side as a feed keeps them.
private struct IndexedRows {
    var locations = RowLocations()
    var index = ViewportIndex()

    var count: Int { locations.count }

    mutating func append(_ point: MapPoint?) {
        locations.append(point)
    }

    mutating func pack() {
        let locations = locations
        index.packNewRows(upTo: locations.count) { rows, inside in locations.located(in: rows, inside: inside) }
    }

    mutating func search(
        _ box: BoundingBox, in allowed: Range<Int>, newest: Bool = false, wanted: Int = 500
    ) -> ViewportSearch {
        let locations = locations
        return index.search(box, in: allowed, newest: newest, wanted: wanted, rowCount: locations.count) {
            rows, inside in
            locations.located(in: rows, inside: inside)
        }
    }
}

@Suite struct ViewportIndexTests {
    /// A generator with a fixed seed, so that a failure repeats (SplitMix64).
    struct SeededRandom: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Points that a box's edges fall on now and then: a grid of whole degrees, clusters, poles, the antimeridian,
    /// repeats, and rows with no location.
    static func point(_ random: inout SeededRandom) -> MapPoint? {
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return nil
        case 1, 2:
            return MapPoint(
                longitude: Double(Int.random(in: -180...180, using: &random)),
                latitude: Double(Int.random(in: -90...90, using: &random)))
        case 3, 4, 5:
            return MapPoint(
                longitude: -83.7 + Double.random(in: -0.05...0.05, using: &random),
                latitude: 42.28 + Double.random(in: -0.05...0.05, using: &random))
        case 6:
            return MapPoint(longitude: [-180, 180, 0][Int.random(in: 0..<3, using: &random)],
                latitude: [-90, 90, 0, 42.28][Int.random(in: 0..<4, using: &random)])
        default:
            return MapPoint(
                longitude: Double.random(in: -180...180, using: &random),
                latitude: Double.random(in: -90...90, using: &random))
        }
    }

    static func box(_ random: inout SeededRandom) -> BoundingBox {
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            let west = Double(Int.random(in: -180...180, using: &random))
            let south = Double(Int.random(in: -90...90, using: &random))
            return BoundingBox(
                west: west, south: south, east: Double(Int.random(in: -180...180, using: &random)),
                north: min(90, south + Double(Int.random(in: 0...60, using: &random))))!
        case 1:
            let west = -83.7 + Double.random(in: -0.06...0.04, using: &random)
            let south = 42.28 + Double.random(in: -0.06...0.04, using: &random)
            return BoundingBox(
                west: west, south: south, east: west + Double.random(in: 0...0.05, using: &random),
                north: south + Double.random(in: 0...0.05, using: &random))!
        case 2:
            return BoundingBox(west: 180, south: -90, east: -180, north: 90)!
        default:
            let a = Double.random(in: -180...180, using: &random)
            let b = Double.random(in: -180...180, using: &random)
            let c = Double.random(in: -90...90, using: &random)
            let d = Double.random(in: -90...90, using: &random)
            return BoundingBox(west: a, south: min(c, d), east: b, north: max(c, d))!
        }
    }

    @Test func findsWhatLookingAtEveryRowFinds() {
        var random = SeededRandom(state: 7)
        var index = IndexedRows()
        var points: [MapPoint?] = []
        // Searches between batches of appends make runs at many sizes, and merge them.
        for _ in 0..<40 {
            for _ in 0..<Int.random(in: 0..<900, using: &random) {
                let point = Self.point(&random)
                points.append(point)
                index.append(point)
            }
            for _ in 0..<25 {
                let box = Self.box(&random)
                let low = Int.random(in: 0...points.count, using: &random)
                let allowed = [0..<points.count, low..<points.count, 0..<low][Int.random(in: 0..<3, using: &random)]
                let expected = allowed.filter { points[$0].map(box.contains) ?? false }
                // How many it is told will be wanted changes how far it looks row by row, never its answers.
                let limits = [1, 7, 500, Int.max]
                let wanted = limits[Int.random(in: 0..<4, using: &random)]
                let search = index.search(box, in: allowed, newest: Bool.random(using: &random), wanted: wanted)
                let limit = limits[Int.random(in: 0..<4, using: &random)]
                #expect(search.first(limit) == Array(expected.prefix(limit)), "\(box) \(allowed) first \(limit)")
                #expect(search.last(limit) == Array(expected.suffix(limit)), "\(box) \(allowed) last \(limit)")
            }
        }
        #expect(points.count > 10 * ViewportIndex.smallestRun)
    }

    @Test func anIndexCarriedPastRemovalsAnswersAsOneMadeAfresh() {
        var random = SeededRandom(state: 11)
        var rows = IndexedRows()
        // Packed in eight stages: runs of several sizes, merged.
        for _ in 0..<8 {
            for _ in 0..<1_125 { rows.append(Self.point(&random)) }
            rows.pack()
        }
        #expect(rows.index.packed == 9_000)
        // Rows taken out at a run's first and last rows, inside runs, and after the last run.
        let removed = (Set([0, 1, 8_999] + (0..<300).map { _ in Int.random(in: 0..<9_000, using: &random) })).sorted()
        let kept = (0..<9_000).filter { !Set(removed).contains($0) }
        var carried = IndexedRows(locations: rows.locations.keeping(kept), index: rows.index.keeping(removing: removed))
        var fresh = IndexedRows(locations: rows.locations.keeping(kept))
        #expect(carried.index.packed == kept.count)
        for _ in 0..<200 {
            let box = Self.box(&random)
            let low = Int.random(in: 0...kept.count, using: &random)
            let (a, b) = (carried.search(box, in: low..<kept.count), fresh.search(box, in: low..<kept.count))
            #expect(a.first(.max) == b.first(.max), "\(box)")
            #expect(a.last(7) == b.last(7))
        }
    }

    @Test func keepsRunsInQuadruplingSizes() {
        var index = IndexedRows()
        let box = BoundingBox(west: -180, south: -90, east: 180, north: 90)!
        for row in 0..<(20 * ViewportIndex.smallestRun) {
            index.append(MapPoint(longitude: Double(row % 360) - 180, latitude: 0))
            if row % 100 == 0 { _ = index.search(box, in: 0..<index.count) }
        }
        let search = index.search(box, in: 0..<index.count)
        let sizes = search.runs.map(\.rows.count)
        #expect(zip(sizes, sizes.dropFirst()).allSatisfy { $0 >= 4 * $1 }, "\(sizes)")
        #expect(search.runs.map(\.rows.count).reduce(0, +) == index.index.packed)
        #expect(index.count - index.index.packed < ViewportIndex.smallestRun)
        #expect(search.first(3) == [0, 1, 2])
        #expect(search.last(2) == [index.count - 2, index.count - 1])
    }

    @Test func looksThroughRowsOneByOneOnlyWhileTheHitsSayItPays() {
        var rows = IndexedRows()
        // One row in ten at the campus, the rest spread over the world.
        for row in 0..<(160 * ViewportIndex.smallestRun) {
            rows.append(
                row % 10 == 0
                    ? MapPoint(longitude: -83.74, latitude: 42.28)
                    : MapPoint(longitude: Double(row % 300) - 150, latitude: Double(row % 7) * 10 - 30))
        }
        rows.pack()
        let campus = BoundingBox(west: -83.75, south: 42.27, east: -83.73, north: 42.29)!
        let packed = rows.index.packed
        let hits = Array(stride(from: 0, to: packed, by: 10))
        // 500 hits are in the newest 5 000 rows: looked through, the runs left alone.
        let crowded = rows.search(campus, in: 0..<packed, newest: true, wanted: 500)
        #expect(crowded.inRuns.count <= packed - 5_000 && crowded.inRuns.count >= packed - 2 * 5_000)
        #expect(crowded.last(500) == Array(hits.suffix(500)))
        // 5 000 would take 50 000 rows: within the most looked through, from the oldest end too.
        let many = rows.search(campus, in: 0..<packed, newest: false, wanted: 5_000)
        #expect(many.inRuns.lowerBound >= 50_000 && many.inRuns.lowerBound <= ViewportIndex.mostLookedThrough)
        #expect(many.first(5_000) == Array(hits.prefix(5_000)))
        // Every one would take all the rows: past the first window, the runs.
        let all = rows.search(campus, in: 0..<packed, newest: true, wanted: .max)
        #expect(all.inRuns == 0..<(packed - ViewportIndex.window))
        #expect(all.last(.max) == hits)
        // No hit in the first window: the runs.
        let empty = BoundingBox(west: 170, south: 80, east: 171, north: 81)!
        #expect(rows.search(empty, in: 0..<packed, newest: true).inRuns == 0..<(packed - ViewportIndex.window))
    }

    @Test func keepingRenumbersTheRowsKept() {
        var locations = RowLocations()
        for row in 0..<3000 { locations.append(row % 3 == 0 ? nil : MapPoint(longitude: Double(row % 100), latitude: 1)) }
        let kept = locations.keeping((0..<3000).filter { $0 % 2 == 0 })
        #expect(kept.count == 1500)
        #expect(kept.location(of: 1) == MapPoint(longitude: 2, latitude: 1))
        #expect(kept.location(of: 0) == nil)
        var searched = IndexedRows(locations: kept)
        let box = BoundingBox(west: 4, south: 0, east: 4, north: 2)!
        #expect(searched.search(box, in: 0..<1500).first(3) == [2, 52, 152])  // 204 is a multiple of 3: not located
    }
}
