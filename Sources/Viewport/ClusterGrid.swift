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
    func cell(longitude: Double, latitude: Double) -> Int {
        column(of: longitude) * cellsPerSide + row(of: latitude)
    }

    /// The column of cells holding `longitude`, from 0 at the antimeridian's west side.
    @inline(__always)
    func column(of longitude: Double) -> Int {
        // Truncation is rounding down wherever the result is not clamped to 0.
        min(cellsPerSide - 1, max(0, Int((longitude + 180) / 360 * Double(cellsPerSide))))
    }

    /// The row of cells holding `latitude`, from 0 at the top: the definition `ClusterTally`'s faster lookup keeps to.
    func row(of latitude: Double) -> Int {
        min(cellsPerSide - 1, max(0, Int((y(latitude) * Double(cellsPerSide)).rounded(.down))))
    }

    /// The latitude of the top edge of `row` (`cellsPerSide` for the bottom of the map): Mercator's inverse.
    func topLatitude(of row: Int) -> Double {
        atan(sinh(.pi * (1 - 2 * Double(row) / Double(cellsPerSide)))) * 180 / .pi
    }

    /// Mercator's y of `latitude`, from 0 at the top of the map to 1 at the bottom.
    private func y(_ latitude: Double) -> Double {
        let clamped = min(Self.mostLatitude, max(-Self.mostLatitude, latitude))
        let sine = sin(clamped * .pi / 180)
        return 0.5 - log((1 + sine) / (1 - sine)) / (4 * .pi)
    }
}
