/// A feed's packed rows counted into the cells of the grid at zoom 6. A cell of any coarser zoom is a block of
/// these (cells halve exactly from one zoom to the next), so a cluster answer at zoom 6 or below takes the cells
/// wholly inside its box from here and walks the packed runs only along the box's edges. At zoom 6 the whole map
/// is 16 384 pixels, the most a box may span (`ClusterGrid.mostPixels`), so the whole world is always read this
/// way, in a pass over at most 65 536 cells instead of a walk down to every leaf whose points straddle a cell edge.
/// The counts are a tally of the whole map at zoom 6 (2 MiB), made when the first point is counted.
public struct ClusterCounts: Sendable {
    /// The finest zoom counted.
    public static let zoom = 6
    static let grid = ClusterGrid(zoom: zoom)!
    static let wholeMap = BoundingBox(west: -180, south: -90, east: 180, north: 90)!

    private var tally: ClusterTally?

    public init() {}

    /// Counts the chatt of `row`, at `point`.
    mutating func add(_ point: MapPoint, row: Int) {
        if tally == nil { tally = ClusterTally(grid: Self.grid, box: Self.wholeMap) }
        tally?.add(point, row: row)
    }

    /// The cell of `grid` (zoom 6 or coarser) at `column` and `row`: the block of cells it covers here, summed.
    func cell(column: Int, row: Int, of grid: ClusterGrid) -> ClusterCell {
        var cell = ClusterCell()
        guard let tally else { return cell }
        let factor = Self.grid.cellsPerSide / grid.cellsPerSide
        for fine in (column * factor)..<((column + 1) * factor) {
            for part in tally.column(fine, rows: (row * factor)..<((row + 1) * factor)) where part.count > 0 {
                cell.add(
                    count: part.count, longitudeSum: part.longitudeSum, latitudeSum: part.latitudeSum, row: part.row)
            }
        }
        return cell
    }
}
