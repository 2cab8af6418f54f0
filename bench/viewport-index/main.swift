// The viewport index alone against looking at the rows one by one (the floor an index must beat), in one process,
// on a million made-up locations: uniform on the sphere, or 80 % around one campus. Each box is 0.01 % of the map's
// area in degrees (3.6° × 1.8°) at a random place, or (campus, every other box) one of the same shape around the
// campus. Each search finds what a map asks for, the newest 500 hits: the scan looks from the newest row back until
// it has them (or reaches the first). Prints the mean time of each and their ratio, then the time clusters take
// (the tally alone, without JSON). Then, on the campus mix, the newest 500 by selectivity: boxes within the campus
// holding about 10 to 100 000 rows each. Usage:
// swift run -c release viewport-index-bench [rows] [boxes]
import Dispatch
import Glibc
import Viewport

struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let rows = arguments.first ?? 1_000_000
let boxCount = arguments.dropFirst().first ?? 200
var random = SplitMix(state: 42)

func seconds(_ work: () -> Void) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    work()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func microseconds(_ seconds: Double) -> String {
    String(Double(Int(seconds * 1e7)) / 10)
}

/// The box a screen of 1 024 × 768 pixels shows around `center` at `zoom` (Web Mercator, 256-pixel tiles).
func screen(around center: MapPoint, zoom: Int) -> BoundingBox {
    let world = Double(256 << zoom)
    let halfWidth = min(180, 512 / world * 360)
    let y = 0.5 - log(tan(.pi / 4 + min(85, max(-85, center.latitude)) * .pi / 360)) / (2 * .pi)
    func latitude(_ y: Double) -> Double { atan(sinh(.pi * (1 - 2 * min(1, max(0, y))))) * 180 / .pi }
    func wrapped(_ longitude: Double) -> Double {
        longitude > 180 ? longitude - 360 : longitude < -180 ? longitude + 360 : longitude
    }
    let (west, east) =
        halfWidth >= 180 ? (-180, 180) : (wrapped(center.longitude - halfWidth), wrapped(center.longitude + halfWidth))
    return BoundingBox(west: west, south: latitude(y + 384 / world), east: east, north: latitude(y - 384 / world))!
}

/// `rows` made-up locations of `mix`: uniform on the sphere, or (campus) 80 % around one campus.
@MainActor func madeUpLocations(_ mix: String) -> RowLocations {
    var locations = RowLocations()
    for _ in 0..<rows {
        let campus = mix == "campus" && Double.random(in: 0..<1, using: &random) < 0.8
        let point =
            campus
            ? MapPoint(
                longitude: -83.7382 + Double.random(in: -0.05...0.05, using: &random),
                latitude: 42.278 + Double.random(in: -0.04...0.04, using: &random))
            : MapPoint(
                longitude: Double.random(in: -180...180, using: &random),
                latitude: asin(Double.random(in: -1...1, using: &random)) * 180 / .pi)
        locations.append(point)
    }
    return locations
}

/// The seconds the newest 500 hits of each of `boxes` take through `index`, and by looking at every row of
/// `locations` from the newest back until there are 500 (or none is left); the hits found, which must agree.
func newest500(
    of boxes: [BoundingBox], in index: inout ViewportIndex, locations: RowLocations
) -> (indexed: Double, scanned: Double, hits: Int) {
    let read = { (range: Range<Int>, box: BoundingBox?) in locations.located(in: range, inside: box) }
    var (indexHits, scanHits) = (0, 0)
    let indexed = seconds {
        for box in boxes {
            let search = index.search(box, in: 0..<rows, newest: true, wanted: 500, rowCount: rows, reading: read)
            indexHits += search.last(500).count
        }
    }
    let scanned = seconds {
        for box in boxes {
            var row = rows
            var found = 0
            while found < 500, row > 0 {
                row -= 1
                if let point = locations.location(of: row), box.contains(point) { found += 1 }
            }
            scanHits += found
        }
    }
    precondition(indexHits == scanHits, "the index and the scan disagree")
    return (indexed, scanned, indexHits)
}

for mix in ["uniform", "campus"] {
    let locations = madeUpLocations(mix)
    let read = { (range: Range<Int>, box: BoundingBox?) in
        locations.located(in: range, inside: box)
    }
    var index = ViewportIndex()
    let packing = seconds { index.packNewRows(upTo: rows, reading: read) }
    let boxes = (0..<boxCount).map { serial -> BoundingBox in
        let (west, south) =
            mix == "campus" && serial % 2 == 0
            ? (-83.7382 - 1.8 + Double.random(in: -0.1...0.1, using: &random), 42.278 - 0.9)
            : (Double.random(in: -180...176.4, using: &random), Double.random(in: -90...88.2, using: &random))
        return BoundingBox(west: west, south: south, east: west + 3.6, north: south + 1.8)!
    }
    let (indexed, scanned, scanHits) = newest500(of: boxes, in: &index, locations: locations)
    // A retention batch's worth of removals: the index carried past them, against packing the kept rows afresh.
    let removed = (0..<1_000).map { $0 * (rows / 1_000) }
    var carried = ViewportIndex()
    let carrying = seconds { carried = index.keeping(removing: removed) }
    precondition(carried.packed == rows - removed.count, "the carried index lost rows")
    // Clusters as a map asks for them: the whole world at every zoom it fits, and screens of 1 024 × 768 pixels at
    // random zooms (2 to 18) centred on random rows.
    func clustering(_ box: BoundingBox, zoom: Int) -> Double {
        seconds {
            let grid = ClusterGrid(zoom: zoom)!
            let clusters = index.clusters(box, in: 0..<rows, on: grid, rowCount: rows, reading: read)
            _ = clusters.tally().occupied.count
        }
    }
    let world = BoundingBox(west: -180, south: -90, east: 180, north: 90)!
    let worldTimes = (0...6).map { clustering(world, zoom: $0) }
    var screenTimes = (0..<boxCount).map { _ -> Double in
        let zoom = Int.random(in: 2...18, using: &random)
        let row = Int.random(in: 0..<rows, using: &random)
        let center = locations.location(of: row) ?? MapPoint(longitude: 0, latitude: 0)
        return clustering(screen(around: center, zoom: zoom), zoom: zoom)
    }
    screenTimes.sort()
    print(
        "\(mix) clusters: the whole world at zooms 0-6 "
            + "\(worldTimes.map { microseconds($0) }.joined(separator: ", ")) µs; "
            + "\(boxCount) screens at zooms 2-18: median \(microseconds(screenTimes[boxCount / 2])) µs, "
            + "p99 \(microseconds(screenTimes[boxCount * 99 / 100])) µs, max \(microseconds(screenTimes.last!)) µs")
    print(
        "\(mix): \(rows) rows packed in \(Int(packing * 1000)) ms; \(boxCount) boxes of 0.01 % of the area, "
            + "\(scanHits / boxCount) of the newest 500 hits each on average: "
            + "index \(microseconds(indexed / Double(boxCount))) µs, "
            + "scan \(microseconds(scanned / Double(boxCount))) µs a box: \(Int(scanned / indexed))× faster; "
            + "carried past 1 000 removals in \(Int(carrying * 1000)) ms")
}

// The newest 500 by selectivity: boxes inside the campus, of the campus's shape, sized to hold about `hits` of its
// 800 000 rows, against looking from the newest row back.
do {
    let locations = madeUpLocations("campus")
    var index = ViewportIndex()
    index.packNewRows(upTo: rows) { range, box in locations.located(in: range, inside: box) }
    var line: [String] = []
    for hits in [10, 100, 1_000, 10_000, 100_000] {
        let side = (Double(hits) / (0.8 * Double(rows))).squareRoot()
        let boxes = (0..<boxCount).map { _ -> BoundingBox in
            let west = -83.7882 + Double.random(in: 0...(0.1 * (1 - side)), using: &random)
            let south = 42.238 + Double.random(in: 0...(0.08 * (1 - side)), using: &random)
            return BoundingBox(west: west, south: south, east: west + 0.1 * side, north: south + 0.08 * side)!
        }
        let (indexed, scanned, _) = newest500(of: boxes, in: &index, locations: locations)
        line.append(
            "\(hits) hits \(microseconds(indexed / Double(boxCount))) µs "
                + "(scan \(microseconds(scanned / Double(boxCount))) µs)")
    }
    print("campus, the newest 500 by selectivity: " + line.joined(separator: "; "))
}
