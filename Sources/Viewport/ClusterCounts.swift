/// A feed's packed rows counted into the cells of the grid at zoom 6. A cell of any coarser zoom is a block of
/// these (cells halve exactly from one zoom to the next), so a cluster answer at zoom 6 or below takes the cells
/// wholly inside its box from here and walks the packed runs only along the box's edges. At zoom 6 the whole map
/// is 16 384 pixels, the most a box may span (`ClusterGrid.mostPixels`), so the whole world is always read this
/// way, in a pass over at most 65 536 cells instead of a walk down to every leaf whose points straddle a cell edge.
public struct ClusterCounts: Sendable {
    /// The finest zoom counted.
    public static let zoom = 6
    static let grid = ClusterGrid(zoom: zoom)!

    /// Column by column, top to bottom; empty until a point is counted (a feed without locations needs none).
    private var cells: [ClusterCell] = []

    public init() {}

    /// Counts `located`.
    mutating func add(_ located: [LocatedRow]) {
        guard !located.isEmpty else { return }
        let side = Self.grid.cellsPerSide
        if cells.isEmpty { cells = Array(repeating: ClusterCell(), count: side * side) }
        for row in located {
            let point = row.point
            cells[Self.grid.cell(longitude: point.longitude, latitude: point.latitude)].add(
                count: 1, longitudeSum: point.longitude, latitudeSum: point.latitude, row: row.row)
        }
    }

    /// The cell of `grid` (zoom 6 or coarser) at `column` and `row`: the block of cells it covers here, summed.
    func cell(column: Int, row: Int, of grid: ClusterGrid) -> ClusterCell {
        var cell = ClusterCell()
        guard !cells.isEmpty else { return cell }
        let side = Self.grid.cellsPerSide
        let factor = side / grid.cellsPerSide
        for fine in (column * factor)..<((column + 1) * factor) {
            for part in cells[(fine * side + row * factor)..<(fine * side + (row + 1) * factor)] where part.count > 0 {
                cell.add(
                    count: part.count, longitudeSum: part.longitudeSum, latitudeSum: part.latitudeSum, row: part.row)
            }
        }
        return cell
    }
}
