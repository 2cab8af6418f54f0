import ASCII

/// A box of longitudes and latitudes in degrees (WGS 84), edges included: `?bbox=west,south,east,north` of
/// docs/API.md, in the order of OGC API Features and GeoJSON. A box whose `west` is east of its `east` crosses the
/// antimeridian: it holds the longitudes from `west` to 180 and from -180 to `east`.
public struct BoundingBox: Sendable, Equatable {
    public let west: Double
    public let south: Double
    public let east: Double
    public let north: Double

    /// The box with these edges; nil unless every edge is a number within range and `south <= north`.
    public init?(west: Double, south: Double, east: Double, north: Double) {
        // ClosedRange.contains is false for NaN.
        let longitudes = -180.0...180.0
        let latitudes = -90.0...90.0
        guard longitudes.contains(west), longitudes.contains(east), latitudes.contains(south),
            latitudes.contains(north), south <= north
        else { return nil }
        self.west = west
        self.south = south
        self.east = east
        self.north = north
    }

    /// The whole map: `-180,-90,180,90`.
    public static let wholeMap = BoundingBox(west: -180, south: -90, east: 180, north: 90)!

    /// The box written as four decimal numbers with commas between them (`-83.8,42.2,-83.6,42.4`); nil for
    /// anything else, including `NaN`, `inf`, hexadecimal and numbers longer than `longestNumber` characters.
    public init?(parsing text: Substring) {
        let parts = text.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var edges: [Double] = []
        for part in parts {
            guard let edge = Self.decimal(Substring(part)) else { return nil }
            edges.append(edge)
        }
        self.init(west: edges[0], south: edges[1], east: edges[2], north: edges[3])
    }

    /// The most characters one edge may take: more digits than a double tells apart.
    static let longestNumber = 32

    /// A decimal number: an optional sign, digits with at most one `.` among or around them, an optional exponent.
    private static func decimal(_ text: Substring) -> Double? {
        let bytes = Array(text.utf8)
        guard (1...longestNumber).contains(bytes.count) else { return nil }
        var index = bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+") ? 1 : 0
        var digits = 0
        var sawPoint = false
        while index < bytes.count, ASCII.isDigit(bytes[index]) || (!sawPoint && bytes[index] == UInt8(ascii: ".")) {
            if bytes[index] == UInt8(ascii: ".") { sawPoint = true } else { digits += 1 }
            index += 1
        }
        guard digits > 0 else { return nil }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                index += 1
            }
            let exponentStart = index
            while index < bytes.count, ASCII.isDigit(bytes[index]) { index += 1 }
            guard index > exponentStart else { return nil }
        }
        guard index == bytes.count else { return nil }
        return Double(text)
    }

    /// Whether the box crosses the antimeridian.
    public var crossesAntimeridian: Bool { west > east }

    /// Whether `point` is inside the box or on its edge.
    public func contains(_ point: MapPoint) -> Bool {
        contains(longitude: point.longitude, latitude: point.latitude)
    }

    /// Whether the point at `longitude`, `latitude` is inside the box or on its edge; false for NaN.
    @inline(__always)
    func contains(longitude: Double, latitude: Double) -> Bool {
        guard latitude >= south, latitude <= north else { return false }
        return crossesAntimeridian
            ? longitude >= west || longitude <= east : longitude >= west && longitude <= east
    }

    /// Whether the rectangle from `low` to `high` (not crossing the antimeridian) lies wholly in the box.
    @inline(__always)
    func covers(low: MapPoint, high: MapPoint) -> Bool {
        guard low.latitude >= south, high.latitude <= north else { return false }
        return crossesAntimeridian
            ? low.longitude >= west || high.longitude <= east : low.longitude >= west && high.longitude <= east
    }

    /// Whether the box and the rectangle from `low` to `high` (not crossing the antimeridian) share a point.
    @inline(__always)
    func intersects(low: MapPoint, high: MapPoint) -> Bool {
        guard high.latitude >= south, low.latitude <= north else { return false }
        return crossesAntimeridian
            ? high.longitude >= west || low.longitude <= east : high.longitude >= west && low.longitude <= east
    }
}
