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

    /// Counts `chatts` (points in the box, with their rows), all within the rectangle from `low` to `high`: where
    /// its corners share a column or a row, so do the points, and only the other is looked up.
    mutating func add(_ chatts: some Sequence<(MapPoint, Int)>, within low: MapPoint, _ high: MapPoint) {
        let (west, east) = (column(of: low.longitude), column(of: high.longitude))
        let (north, south) = (row(of: high.latitude), row(of: low.latitude))
        for (point, row) in chatts {
            let column = west == east ? west : column(of: point.longitude)
            let windowRow = north == south ? north : self.row(of: point.latitude)
            cells[column * rows + windowRow].add(
                count: 1, longitudeSum: point.longitude, latitudeSum: point.latitude, row: row)
        }
    }

    /// Counts `count` (at least 2) chatts in the cell at `index` whose positions add up to the sums.
    mutating func add(cell index: Int, count: Int, longitudeSum: Double, latitudeSum: Double) {
        cells[index].add(count: count, longitudeSum: longitudeSum, latitudeSum: latitudeSum, row: -1)
    }

    /// The cells with chatts, column by column from the box's west edge, top to bottom.
    public var occupied: [ClusterCell] {
        cells.filter { $0.count > 0 }
    }
}
