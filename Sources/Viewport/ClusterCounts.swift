/// A feed's packed rows counted into the cells of the grid at zoom 6. A cell of any coarser zoom is a block of
/// these (cells halve exactly from one zoom to the next), so a cluster answer at zoom 6 or below takes the cells
/// wholly inside its box from here and walks the packed runs only along the box's edges. At zoom 6 the whole map
/// is 16 384 pixels, the most a box may span (`ClusterGrid.mostPixels`), so the whole world is always read this
/// way, in a pass over at most 65 536 cells instead of a walk down to every leaf whose points straddle a cell edge.
/// The counts are tallies of the whole map at zoom 6 (2 MiB) and, summed from it, at each coarser zoom (a third as
/// much again), so that a coarse cell is one read, not a block of up to 4 096: made when the first point is counted.
public struct ClusterCounts: Sendable {
    /// The finest zoom counted.
    public static let zoom = 6

    /// The whole map at zooms 0 to `zoom`, by zoom; the coarser ones as `summarize` last left them.
    private var tallies: [ClusterTally] = []

    public init() {}

    /// Counts the chatt of `row`, at `point`, at the finest zoom; `summarize` carries it to the coarser ones.
    mutating func add(_ point: MapPoint, row: Int) {
        if tallies.isEmpty {
            tallies = (0...Self.zoom).map { ClusterTally(grid: ClusterGrid(zoom: $0)!, box: .wholeMap) }
        }
        tallies[Self.zoom].add(point, row: row)
    }

    /// Sums the coarser zooms' cells again from the finest, after points were added.
    mutating func summarize() {
        guard !tallies.isEmpty else { return }
        for zoom in stride(from: Self.zoom - 1, through: 0, by: -1) {
            tallies[zoom] = ClusterTally(halving: tallies[zoom + 1])
        }
    }

    /// The cell of `grid` (zoom 6 or coarser) at `column` and `row`.
    func cell(column: Int, row: Int, of grid: ClusterGrid) -> ClusterCell {
        guard !tallies.isEmpty else { return ClusterCell() }
        return tallies[grid.zoom].column(column, rows: row..<(row + 1)).first!
    }
}
