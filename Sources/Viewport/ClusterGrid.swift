#if canImport(Glibc)
import Glibc
#endif

/// The cells chatts are clustered in at one zoom of a Web Mercator map (256-pixel tiles, numbered as Leaflet and
/// MapKit number them): squares of `cellPixels` on a side, about the reach of a marker on a screen. Every chatt in
/// one cell is one feature of `GET /getmaps/clusters`.
public struct ClusterGrid: Sendable, Equatable {
    /// The zooms a map asks for.
    public static let zooms = 0...20
    /// A cell's side, in pixels.
    public static let cellPixels = 64
    /// The most pixels a box may span on either side at its zoom: more than any screen, and it bounds the cells an
    /// answer may hold (and its cost) to what a screen shows.
    public static let mostPixels = 16_384
    /// Mercator's latitude limit (where the map is square); points beyond it count in the top or bottom cells.
    static let mostLatitude = 85.051_128_779_806_59

    public let zoom: Int
    /// Cells along either side of the world.
    let cellsPerSide: Int

    /// The grid at `zoom`; nil outside `zooms`.
    public init?(zoom: Int) {
        guard Self.zooms.contains(zoom) else { return nil }
        self.zoom = zoom
        cellsPerSide = (256 << zoom) / Self.cellPixels
    }

    /// Whether `box` spans at most `pixels` each way at this zoom.
    public func fits(_ box: BoundingBox, pixels: Int = mostPixels) -> Bool {
        let worldPixels = Double(256 << zoom)
        let width = (box.crossesAntimeridian ? box.east + 360 - box.west : box.east - box.west) / 360 * worldPixels
        let height = (y(box.south) - y(box.north)) * worldPixels
        // A thousandth of a pixel of slack: the whole map's height comes out of sin and log a hair over its width.
        return width <= Double(pixels) + 0.001 && height <= Double(pixels) + 0.001
    }

    /// The cell holding `longitude`, `latitude`, as one number (its column times the cells on a side, plus its row).
    @inline(__always)
    func cell(longitude: Double, latitude: Double) -> Int {
        let side = Double(cellsPerSide)
        let column = min(cellsPerSide - 1, max(0, Int(((longitude + 180) / 360 * side).rounded(.down))))
        let row = min(cellsPerSide - 1, max(0, Int((y(latitude) * side).rounded(.down))))
        return column * cellsPerSide + row
    }

    /// Mercator's y of `latitude`, from 0 at the top of the map to 1 at the bottom.
    private func y(_ latitude: Double) -> Double {
        let clamped = min(Self.mostLatitude, max(-Self.mostLatitude, latitude))
        let sine = sin(clamped * .pi / 180)
        return 0.5 - log((1 + sine) / (1 - sine)) / (4 * .pi)
    }
}

/// What one cell of a `ClusterGrid` holds of a box: how many chatts, where on average, and which row when one.
public struct ClusterCell: Sendable, Equatable {
    /// Located chatts in the cell and the box.
    public internal(set) var count = 0
    var longitudeSum = 0.0
    var latitudeSum = 0.0
    /// The row of the chatt when `count` is 1.
    public internal(set) var row = -1

    /// The mean of its chatts' positions: a lone chatt's own.
    public var center: MapPoint {
        MapPoint(longitude: longitudeSum / Double(count), latitude: latitudeSum / Double(count))
    }
}

/// The cells of one answer of `GET /getmaps/clusters`, as chatts and packed nodes are counted into them.
public struct ClusterTally: Sendable {
    public let grid: ClusterGrid
    private var cells: [Int: ClusterCell] = [:]

    public init(grid: ClusterGrid) {
        self.grid = grid
    }

    /// Counts the chatt of `row`, at `point`.
    public mutating func add(_ point: MapPoint, row: Int) {
        let key = grid.cell(longitude: point.longitude, latitude: point.latitude)
        cells[key, default: ClusterCell()].count += 1
        cells[key]!.longitudeSum += point.longitude
        cells[key]!.latitudeSum += point.latitude
        cells[key]!.row = cells[key]!.count == 1 ? row : -1
    }

    /// Counts `count` (at least 2) chatts in the cell `key` whose positions add up to the sums.
    mutating func add(cell key: Int, count: Int, longitudeSum: Double, latitudeSum: Double) {
        cells[key, default: ClusterCell()].count += count
        cells[key]!.longitudeSum += longitudeSum
        cells[key]!.latitudeSum += latitudeSum
        cells[key]!.row = -1
    }

    /// The cells with chatts, in the grid's order (column by column, top to bottom).
    public var occupied: [ClusterCell] {
        cells.sorted { $0.key < $1.key }.map(\.value)
    }
}
