import Testing

@testable import Viewport

@Suite struct ClusterTests {
    @Test func aGridHasFourCellsATileEachWay() throws {
        let zero = try #require(ClusterGrid(zoom: 0))
        #expect(zero.cellsPerSide == 4)
        #expect(try #require(ClusterGrid(zoom: 20)).cellsPerSide == 4 << 20)
        #expect(ClusterGrid(zoom: -1) == nil && ClusterGrid(zoom: 21) == nil)
        // Column by column, top to bottom: the north-west cell first, the south-east last.
        #expect(zero.cell(longitude: -180, latitude: 90) == 0)
        #expect(zero.cell(longitude: 180, latitude: -90) == 15)
        #expect(zero.cell(longitude: -1e-9, latitude: 1e-9) == 1 * 4 + 1)
        #expect(zero.cell(longitude: 0, latitude: 0) == 2 * 4 + 2)
    }

    @Test func aBoxFitsWhenNoWiderThanAScreenCanBe() throws {
        let world = BoundingBox(west: -180, south: -85, east: 180, north: 85)!
        #expect(try #require(ClusterGrid(zoom: 6)).fits(world))
        let wholeMap = BoundingBox(west: -180, south: -90, east: 180, north: 90)!
        #expect(try #require(ClusterGrid(zoom: 6)).fits(wholeMap), "exactly 16 384 pixels each way")
        #expect(try !#require(ClusterGrid(zoom: 7)).fits(wholeMap))
        #expect(try !#require(ClusterGrid(zoom: 7)).fits(world))
        let campus = BoundingBox(west: -83.75, south: 42.27, east: -83.72, north: 42.29)!
        #expect(try #require(ClusterGrid(zoom: 20)).fits(campus) == false)
        #expect(try #require(ClusterGrid(zoom: 16)).fits(campus))
        let acrossTheAntimeridian = BoundingBox(west: 179, south: -1, east: -179, north: 1)!
        #expect(try #require(ClusterGrid(zoom: 12)).fits(acrossTheAntimeridian))
    }

    @Test func countsEveryChattInTheBoxOnceInItsCell() {
        var random = ViewportIndexTests.SeededRandom(state: 3)
        var locations = RowLocations()
        var index = ViewportIndex()
        var points: [MapPoint?] = []
        for round in 0..<12 {
            for _ in 0..<Int.random(in: 200..<1500, using: &random) {
                let point = ViewportIndexTests.point(&random)
                points.append(point)
                locations.append(point)
            }
            for _ in 0..<20 {
                let box = ViewportIndexTests.box(&random)
                guard
                    let grid = (0...20).reversed().lazy.compactMap(ClusterGrid.init(zoom:))
                        .first(where: { $0.fits(box) })
                        .flatMap({ ClusterGrid(zoom: max(0, $0.zoom - Int.random(in: 0...3, using: &random))) })
                else { continue }
                let end = round.isMultiple(of: 2) ? points.count : Int.random(in: 0...points.count, using: &random)
                let allowed = 0..<end
                let snapshot = locations
                let tally = index.clusters(box, in: allowed, on: grid, rowCount: points.count) { rows, inside in
                    snapshot.located(in: rows, inside: inside)
                }.tally()
                let inBox = allowed.compactMap { row in points[row].flatMap { box.contains($0) ? (row, $0) : nil } }
                let (got, want) = (tally.occupied, Self.cells(of: inBox, in: box, on: grid))
                #expect(got.map(\.count) == want.map(\.count), "\(box) zoom \(grid.zoom)")
                #expect(got.map(\.row) == want.map(\.row), "lone chatts name their rows")
                for (cell, reference) in zip(got, want) {
                    #expect(abs(cell.center.longitude - reference.center.longitude) < 1e-9)
                    #expect(abs(cell.center.latitude - reference.center.latitude) < 1e-9)
                }
            }
        }
    }

    /// The cells of `rows`' points by the grid's own definition of a cell (`ClusterGrid.cell`), in a tally's order:
    /// column by column from the box's west edge, top to bottom.
    static func cells(of rows: [(Int, MapPoint)], in box: BoundingBox, on grid: ClusterGrid) -> [ClusterCell] {
        var cells: [Int: ClusterCell] = [:]
        for (row, point) in rows {
            let key = grid.cell(longitude: point.longitude, latitude: point.latitude)
            cells[key, default: ClusterCell()].count += 1
            cells[key]!.longitudeSum += point.longitude
            cells[key]!.latitudeSum += point.latitude
            cells[key]!.row = cells[key]!.count == 1 ? row : -1
        }
        let (side, west) = (grid.cellsPerSide, grid.column(of: box.west))
        func order(_ key: Int) -> Int { ((key / side - west + side) % side) * side + key % side }
        return cells.sorted { order($0.key) < order($1.key) }.map(\.value)
    }

    @Test func aPointOnARowsEdgeIsInTheRowTheGridSays() throws {
        let grid = try #require(ClusterGrid(zoom: 5))
        let box = try #require(BoundingBox(west: -10, south: -60, east: 10, north: 60))
        var points: [(Int, MapPoint)] = []
        for row in grid.row(of: 60)...grid.row(of: -60) {
            let edge = grid.topLatitude(of: row)
            for latitude in [edge, edge.nextUp, edge.nextDown] {
                let point = MapPoint(longitude: 0, latitude: latitude)
                if box.contains(point) { points.append((points.count, point)) }
            }
        }
        var tally = ClusterTally(grid: grid, box: box)
        for (row, point) in points { tally.add(point, row: row) }
        #expect(tally.occupied.map(\.count) == Self.cells(of: points, in: box, on: grid).map(\.count))
    }

    @Test func theWholeWorldAtZoomZeroIsSixteenCells() {
        var locations = RowLocations()
        for row in 0..<50_000 {
            locations.append(MapPoint(longitude: Double(row % 3600) / 10 - 180, latitude: Double(row % 1700) / 10 - 85))
        }
        var index = ViewportIndex()
        let snapshot = locations
        let world = BoundingBox(west: -180, south: -90, east: 180, north: 90)!
        let tally = index.clusters(world, in: 0..<50_000, on: ClusterGrid(zoom: 0)!, rowCount: 50_000) { rows, inside in
            snapshot.located(in: rows, inside: inside)
        }.tally()
        #expect(tally.occupied.count == 16)
        #expect(tally.occupied.map(\.count).reduce(0, +) == 50_000)
    }

    @Test func lowZoomsCountTheCellsInsideFromTheCountsAndStayExact() throws {
        var random = ViewportIndexTests.SeededRandom(state: 11)
        let fine = try #require(ClusterGrid(zoom: ClusterCounts.zoom))
        var points: [MapPoint?] = []
        for _ in 0..<3000 {
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                // On the edges of the finest counted cells, where rounding could put a point on either side.
                let longitude = Double(Int.random(in: 0...256, using: &random)) / 256 * 360 - 180
                let latitude = fine.topLatitude(of: Int.random(in: 1..<256, using: &random))
                points.append(MapPoint(longitude: longitude, latitude: [latitude, latitude.nextUp, latitude.nextDown][
                    Int.random(in: 0..<3, using: &random)]))
            default:
                points.append(ViewportIndexTests.point(&random))
            }
        }
        var index = ViewportIndex()
        var boxes = [
            BoundingBox(west: -180, south: -90, east: 180, north: 90)!,
            BoundingBox(west: -180, south: -85.051_128_78, east: 180, north: 85.051_128_78)!,
            BoundingBox(west: 180, south: -90, east: -180, north: 90)!,
            BoundingBox(west: 170, south: -60, east: -170, north: 60)!,
            BoundingBox(west: -90, south: 0, east: 0, north: fine.topLatitude(of: 64))!,
        ]
        for _ in 0..<10 { boxes.append(ViewportIndexTests.box(&random)) }
        // Boxes whose edges are the finest cells' edges, or a hair either side of them. (Each box is asked at
        // every zoom to 6 twice, summing up to 65 536 counted cells each time: slow in a sanitized debug build.)
        func nudged(_ edge: Double) -> Double { [edge, edge.nextUp, edge.nextDown][Int.random(in: 0..<3, using: &random)] }
        for _ in 0..<15 {
            let (west, east) = (Int.random(in: 0..<128, using: &random), Int.random(in: 128...256, using: &random))
            let (north, south) = (Int.random(in: 1..<128, using: &random), Int.random(in: 128..<256, using: &random))
            boxes.append(BoundingBox(
                west: nudged(Double(west) / 256 * 360 - 180), south: nudged(fine.topLatitude(of: south)),
                east: min(180, nudged(Double(east) / 256 * 360 - 180)), north: nudged(fine.topLatitude(of: north)))!)
        }
        for removal in 0..<2 {
            var locations = RowLocations()
            for point in points { locations.append(point) }
            let snapshot = locations
            for box in boxes {
                for zoom in 0...ClusterCounts.zoom {
                    let grid = try #require(ClusterGrid(zoom: zoom))
                    guard grid.fits(box) else { continue }
                    let tally = index.clusters(box, in: 0..<points.count, on: grid, rowCount: points.count) {
                        rows, inside in snapshot.located(in: rows, inside: inside)
                    }.tally()
                    let inBox = points.indices.compactMap { row in points[row].flatMap { box.contains($0) ? (row, $0) : nil } }
                    let (got, want) = (tally.occupied, Self.cells(of: inBox, in: box, on: grid))
                    #expect(got.map(\.count) == want.map(\.count), "\(box) zoom \(zoom), after \(removal) removals")
                    #expect(got.map(\.row) == want.map(\.row), "lone chatts name their rows")
                    for (cell, reference) in zip(got, want) {
                        #expect(abs(cell.center.longitude - reference.center.longitude) < 1e-9)
                        #expect(abs(cell.center.latitude - reference.center.latitude) < 1e-9)
                    }
                }
            }
            // Take some rows out, as a removal does, and look again.
            let removed = stride(from: 7, to: points.count, by: 13).map { $0 }
            index = index.keeping(removing: removed)
            let gone = Set(removed)
            points = points.indices.filter { !gone.contains($0) }.map { points[$0] }
        }
    }
}
