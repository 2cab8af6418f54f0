/// Where each row of a feed is, in feed order: what a `ViewportIndex` packs. Kept by whoever keeps the rows.
public struct RowLocations: Sendable {
    // Two arrays of doubles, NaN where a row has no location: 16 bytes a row.
    private var longitudes: [Double] = []
    private var latitudes: [Double] = []

    public init() {}

    /// The rows it knows.
    public var count: Int { longitudes.count }

    /// Takes in the next row, located at `point` (nil: not located).
    public mutating func append(_ point: MapPoint?) {
        longitudes.append(point?.longitude ?? .nan)
        latitudes.append(point?.latitude ?? .nan)
    }

    /// Where row `row` is, if located.
    public func location(of row: Int) -> MapPoint? {
        longitudes[row].isNaN ? nil : MapPoint(longitude: longitudes[row], latitude: latitudes[row])
    }

    /// The located rows among `rows` (within `0..<count`) that lie in `box` (nil: anywhere), in feed order: what a
    /// `ViewportIndex` reads.
    public func located(in rows: Range<Int>, inside box: BoundingBox? = nil) -> [LocatedRow] {
        guard let box else {
            return rows.compactMap { row in location(of: row).map { LocatedRow(point: $0, row: row) } }
        }
        // A search may look through tens of thousands of rows for a crowded box (`ViewportIndex.search`): a test
        // without branches (their mispredictions cost several times the comparisons; bench/RESULTS.md, "Looking
        // through rows"), in which NaN fails every comparison. A box across the antimeridian is two, either side
        // of it, with the same latitudes; another is two the same.
        precondition(rows.upperBound <= count, "rows beyond the locations")
        let eastern = box.crossesAntimeridian ? 180 : box.east
        let western = box.crossesAntimeridian ? -180 : box.west
        let (westLow, westHigh) = (SIMD2(box.west, box.south), SIMD2(eastern, box.north))
        let (eastLow, eastHigh) = (SIMD2(western, box.south), SIMD2(box.east, box.north))
        var found: [LocatedRow] = []
        longitudes.withUnsafeBufferPointer { longitudes in
            latitudes.withUnsafeBufferPointer { latitudes in
                for row in rows {
                    let point = SIMD2(longitudes[row], latitudes[row])
                    let west = (point .>= westLow) .& (point .<= westHigh)
                    let east = (point .>= eastLow) .& (point .<= eastHigh)
                    if all(west .| east) {
                        found.append(LocatedRow(point: MapPoint(longitude: point.x, latitude: point.y), row: row))
                    }
                }
            }
        }
        return found
    }

    /// The first `count` rows alone.
    public consuming func prefix(_ count: Int) -> RowLocations {
        longitudes.removeLast(longitudes.count - count)
        latitudes.removeLast(latitudes.count - count)
        return self
    }

    /// The rows at `kept` (rising) alone, numbered from 0 in that order.
    public func keeping(_ kept: some Sequence<Int>) -> RowLocations {
        var locations = RowLocations()
        for row in kept { locations.append(location(of: row)) }
        return locations
    }
}

/// A row of a feed, and where it is.
public struct LocatedRow: Sendable, Equatable {
    public var point: MapPoint
    public var row: Int

    public init(point: MapPoint, row: Int) {
        self.point = point
        self.row = row
    }
}
