/// What one cell of a `ClusterGrid` holds of a box: how many chatts, where on average, and which row when one.
public struct ClusterCell: Sendable, Equatable {
    /// Located chatts in the cell and the box.
    public internal(set) var count = 0
    var longitudeSum = 0.0
    var latitudeSum = 0.0
    /// The row of the chatt when `count` is 1.
    public internal(set) var row = -1

    /// Counts `count` chatts (the one of `row`, when one) whose positions add up to the sums.
    @inline(__always)
    mutating func add(count: Int, longitudeSum: Double, latitudeSum: Double, row: Int) {
        self.count += count
        self.longitudeSum += longitudeSum
        self.latitudeSum += latitudeSum
        self.row = self.count == 1 ? row : -1
    }

    /// The mean of its chatts' positions: a lone chatt's own.
    public var center: MapPoint {
        MapPoint(longitude: longitudeSum / Double(count), latitude: latitudeSum / Double(count))
    }
}

/// The cells of one answer of `GET /getmaps/clusters`, as chatts and packed nodes are counted into them: an array
/// over the window of cells the box covers (at most 257 on a side, as `ClusterGrid.fits` bounds a box), and the
/// latitudes of the window's row edges, so that a point's cell costs a few comparisons, not a hash, a sine and a
/// logarithm.
public struct ClusterTally: Sendable {
    public let grid: ClusterGrid
    /// The window: its west column (columns wrap around the antimeridian), its top row, and its size.
    private let firstColumn: Int
    private let columns: Int
    private let firstRow: Int
    private let rows: Int
    /// The latitudes of the top edges of the window's rows and of the bottom of its last, north to south.
    private let rowEdges: [Double]
    /// Column by column, top to bottom.
    private var cells: [ClusterCell]
    /// The window's columns and rows whose cells were counted from `ClusterCounts` (see `count(from:inside:)`): a
    /// walk of the packed runs leaves their points out.
    private var counted: (columns: ClosedRange<Int>, rows: ClosedRange<Int>)?

    /// A point this close to a row's edge (in degrees) has its row worked out by `ClusterGrid.row(of:)` itself,
    /// which the edges' inverse computation could disagree with in the last bits.
    private static let edgeMargin = 1e-9

    /// An empty tally of the points of `box`, which `grid` must fit (`ClusterGrid.fits`).
    public init(grid: ClusterGrid, box: BoundingBox) {
        self.grid = grid
        let side = grid.cellsPerSide
        let (west, east) = (grid.column(of: box.west), grid.column(of: box.east))
        firstColumn = west
        columns =
            if !box.crossesAntimeridian { east - west + 1 } else if east < west { east + side - west + 1 } else { side }
        let top = grid.row(of: box.north)
        firstRow = top
        rows = grid.row(of: box.south) - top + 1
        rowEdges = (top...(top + rows)).map(grid.topLatitude(of:))
        cells = Array(repeating: ClusterCell(), count: columns * rows)
    }

    /// The whole map at the zoom coarser than `finer`'s, a tally of the whole map: each cell the four it halves
    /// into there, summed.
    init(halving finer: ClusterTally) {
        self.init(grid: ClusterGrid(zoom: finer.grid.zoom - 1)!, box: .wholeMap)
        let side = grid.cellsPerSide
        precondition(columns == side && rows == side && finer.columns == 2 * side && finer.rows == 2 * side)
        for column in 0..<side {
            for row in 0..<side {
                var cell = ClusterCell()
                for fineColumn in (2 * column)...(2 * column + 1) {
                    for part in finer.column(fineColumn, rows: (2 * row)..<(2 * row + 2)) where part.count > 0 {
                        cell.add(
                            count: part.count, longitudeSum: part.longitudeSum, latitudeSum: part.latitudeSum,
                            row: part.row)
                    }
                }
                cells[column * rows + row] = cell
            }
        }
    }

    /// The index in `cells` of the cell holding `point`, which lies in the box.
    @inline(__always)
    func cell(of point: MapPoint) -> Int {
        column(of: point.longitude) * rows + row(of: point.latitude)
    }

    /// The window's column holding `longitude`.
    @inline(__always)
    private func column(of longitude: Double) -> Int {
        var column = grid.column(of: longitude) - firstColumn
        if column < 0 { column += grid.cellsPerSide }
        return min(column, columns - 1)
    }

    /// The window's row holding `latitude`: the number of inner edges at or north of it, by bisection.
    @inline(__always)
    private func row(of latitude: Double) -> Int {
        var (low, high) = (1, rows)
        while low < high {
            let middle = (low + high) / 2
            if rowEdges[middle] >= latitude { low = middle + 1 } else { high = middle }
        }
        let row = low - 1
        guard abs(latitude - rowEdges[row]) < Self.edgeMargin || abs(latitude - rowEdges[row + 1]) < Self.edgeMargin
        else { return row }
        return min(rows - 1, max(0, grid.row(of: latitude) - firstRow))
    }

    /// Counts the chatt of `row`, at `point` (in the box).
    public mutating func add(_ point: MapPoint, row: Int) {
        cells[cell(of: point)].add(count: 1, longitudeSum: point.longitude, latitudeSum: point.latitude, row: row)
    }

    // MARK: - A walk of packed runs

    /// Counts the packed chatt of `row`, at `point` (in the box), unless its cell was counted already.
    mutating func addPacked(_ point: MapPoint, row: Int) {
        let (column, windowRow) = (column(of: point.longitude), self.row(of: point.latitude))
        guard !isCounted(column: column, row: windowRow) else { return }
        cells[column * rows + windowRow].add(
            count: 1, longitudeSum: point.longitude, latitudeSum: point.latitude, row: row)
    }

    /// Counts packed `chatts` (points in the box, with their rows), all within the rectangle from `low` to `high`,
    /// but those in cells counted already: where its corners share a column or a row, so do the points, and only
    /// the other is looked up.
    mutating func addPacked(_ chatts: some Sequence<(MapPoint, Int)>, within low: MapPoint, _ high: MapPoint) {
        let (west, east) = (column(of: low.longitude), column(of: high.longitude))
        let (north, south) = (row(of: high.latitude), row(of: low.latitude))
        for (point, row) in chatts {
            let column = west == east ? west : column(of: point.longitude)
            let windowRow = north == south ? north : self.row(of: point.latitude)
            guard !isCounted(column: column, row: windowRow) else { continue }
            cells[column * rows + windowRow].add(
                count: 1, longitudeSum: point.longitude, latitudeSum: point.latitude, row: row)
        }
    }

    /// Counts `count` (at least 2) packed chatts in the cell at `index` whose positions add up to the sums, unless
    /// the cell was counted already.
    mutating func addPacked(cell index: Int, count: Int, longitudeSum: Double, latitudeSum: Double) {
        guard !isCounted(column: index / rows, row: index % rows) else { return }
        cells[index].add(count: count, longitudeSum: longitudeSum, latitudeSum: latitudeSum, row: -1)
    }

    /// Whether every point in the rectangle from `low` to `high` (in the box) lies in a cell counted already.
    func isCounted(low: MapPoint, high: MapPoint) -> Bool {
        guard let counted else { return false }
        return counted.columns.contains(column(of: low.longitude)) && counted.columns.contains(column(of: high.longitude))
            && counted.rows.contains(row(of: high.latitude)) && counted.rows.contains(row(of: low.latitude))
    }

    @inline(__always)
    private func isCounted(column: Int, row: Int) -> Bool {
        guard let counted else { return false }
        return counted.columns.contains(column) && counted.rows.contains(row)
    }

    // MARK: - Cells counted beforehand

    /// Takes the cells wholly inside `box` (this tally's box) from `counts`, whose grid must be as fine as this
    /// one's or finer; a walk of the packed runs then counts only the points of the other cells. A cell counts as
    /// inside when its edges are `edgeMargin` or more inside the box's, or on the map's own edges: a point is then
    /// in the box however its cell was rounded.
    mutating func count(from counts: ClusterCounts, inside box: BoundingBox) {
        let side = grid.cellsPerSide
        let columnsInside = (0..<columns).filter { column in
            let absolute = (firstColumn + column) % side
            let west = Double(absolute) / Double(side) * 360 - 180
            let east = Double(absolute + 1) / Double(side) * 360 - 180
            let afterWest = west >= box.west + Self.edgeMargin || (west == -180 && box.west == -180)
            let beforeEast = east <= box.east - Self.edgeMargin || (east == 180 && box.east == 180)
            guard box.crossesAntimeridian else { return afterWest && beforeEast }
            // The window runs from the box's west edge to the antimeridian, then on to its east edge.
            return column < side - firstColumn ? afterWest : beforeEast
        }
        let rowsInside = (0..<rows).filter { row in
            let absolute = firstRow + row
            let belowNorth = absolute == 0 ? box.north == 90 : rowEdges[row] <= box.north - Self.edgeMargin
            let aboveSouth = absolute == side - 1 ? box.south == -90 : rowEdges[row + 1] >= box.south + Self.edgeMargin
            return belowNorth && aboveSouth
        }
        guard let firstColumnInside = columnsInside.first, let lastColumnInside = columnsInside.last,
            let firstRowInside = rowsInside.first, let lastRowInside = rowsInside.last,
            columnsInside.count == lastColumnInside - firstColumnInside + 1,
            rowsInside.count == lastRowInside - firstRowInside + 1
        else { return }
        counted = (firstColumnInside...lastColumnInside, firstRowInside...lastRowInside)
        for column in firstColumnInside...lastColumnInside {
            let absolute = (firstColumn + column) % side
            for row in firstRowInside...lastRowInside {
                let cell = counts.cell(column: absolute, row: firstRow + row, of: grid)
                guard cell.count > 0 else { continue }
                cells[column * rows + row].add(
                    count: cell.count, longitudeSum: cell.longitudeSum, latitudeSum: cell.latitudeSum, row: cell.row)
            }
        }
    }

    /// The cells of the window's `column` in `rows`, top to bottom.
    func column(_ column: Int, rows range: Range<Int>) -> ArraySlice<ClusterCell> {
        cells[(column * rows + range.lowerBound)..<(column * rows + range.upperBound)]
    }

    /// The cells with chatts, column by column from the box's west edge, top to bottom.
    public var occupied: [ClusterCell] {
        cells.filter { $0.count > 0 }
    }
}
