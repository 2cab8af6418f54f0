import ChattModel
import Dispatch
import HTTPCore
import JSON
import Viewport

extension StoredChatt {
    /// Where it was posted, if its geodata says (see `MapPoint.init(geodata:)`).
    public var location: MapPoint? {
        geodata.flatMap(MapPoint.init(geodata:))
    }
}

extension FeedLineage {
    /// The rows of `tip` that lie in `box` from row `from` on, in feed order: the first `limit` of them, or the last
    /// when `newest`. Settled rows are searched in the lineage's viewport index (packed on demand), tail rows looked
    /// through.
    func rows(in box: BoundingBox, of tip: FeedTip, from: Int, limit: Int, newest: Bool) -> [Int] {
        let tailHits = tip.tail.indices.compactMap { index -> Int? in
            let row = tip.settledRows + index
            guard row >= from, let point = tip.tail[index].chatt.location, box.contains(point) else { return nil }
            return row
        }
        let newestTail = newest ? Array(tailHits.suffix(limit)) : []
        let wanted = limit - newestTail.count
        let search = viewport.withLock { index in
            index.search(
                box, in: min(from, tip.settledRows)..<tip.settledRows, newest: newest, wanted: wanted,
                rowCount: tip.settledRows, reading: readLocations)
        }
        guard newest else {
            let settledHits = search.first(limit)
            return settledHits + tailHits.prefix(limit - settledHits.count)
        }
        return search.last(wanted) + newestTail
    }

    /// The cells on `grid` of `tip`'s rows in `box`: settled rows from the viewport index, tail rows one by one.
    func clusters(in box: BoundingBox, on grid: ClusterGrid, of tip: FeedTip) -> ClusterTally {
        let clusters = viewport.withLock { index in
            index.clusters(box, in: 0..<tip.settledRows, on: grid, rowCount: tip.settledRows, reading: readLocations)
        }
        var tally = clusters.tally()
        for (index, row) in tip.tail.enumerated() {
            if let point = row.chatt.location, box.contains(point) { tally.add(point, row: tip.settledRows + index) }
        }
        return tally
    }

    /// The located settled rows among `rows` inside `box` (nil: anywhere): what the viewport index reads.
    private func readLocations(_ rows: Range<Int>, inside box: BoundingBox?) -> [LocatedRow] {
        settled.withLock { $0.locations.located(in: rows, inside: box) }
    }

    /// The bytes of `tip`'s row at `row`, as `ChattRowEncoder` wrote them.
    func rowBytes(at row: Int, in tip: FeedTip) -> ArraySlice<UInt8> {
        // The body of one row is that row between brackets.
        body(ofRows: [row], in: tip).bytes.dropFirst().dropLast()
    }

    /// Packs the settled rows of a maps lineage into its viewport index on a background queue, so that the first
    /// box asked after a full read of the store (at start) does not wait for a million rows to be packed.
    func packViewportSoon() {
        guard kind == .maps else { return }
        Self.viewportWork.async { [self] in
            let rowCount = settled.withLock(\.tip.settledRows)
            viewport.withLock { $0.packNewRows(upTo: rowCount, reading: readLocations) }
        }
    }

    /// Where lineages' viewport indexes are packed and carried, one after another in the order asked: a lineage's
    /// index is carried from its predecessor's only once that one is made.
    private static let viewportWork = DispatchQueue(label: "chatterd.viewport", qos: .utility)

    /// Makes this lineage's viewport index, on a background queue, from `old`'s, the lineage a removal of its
    /// settled rows `removed` (in `old`'s numbering, rising) started this one from: the runs lose those rows' points
    /// and keep their order (`ViewportIndex.keeping(removing:)`). Unless a box was asked of this lineage first, which
    /// packed its own.
    func carryViewportSoon(from old: FeedLineage, removing removed: [Int]) {
        guard kind == .maps else { return }
        Self.viewportWork.async { [self] in
            // This lineage's lock, then the older one's: the order in which lineages are made, so never a cycle.
            viewport.withLock { index in
                guard index.packed == 0 else { return }
                index = old.viewport.withLock { $0 }.keeping(removing: removed)
            }
        }
    }

    /// A JSON array of `tip`'s rows at `rows` (rising): slices of the body's own segments, with a `,` between rows.
    func body(ofRows rows: [Int], in tip: FeedTip) -> HTTPBody {
        var body = HTTPBody(Self.punctuation[0..<1])
        let settledRows = rows.prefix { $0 < tip.settledRows }
        if !settledRows.isEmpty {
            let spans = settled.withLock { state in
                settledRows.map { row in
                    // Row i runs from its "[" to the "," before the next row, or to the end of the settled bytes.
                    (state.rowStarts[row], row + 1 < tip.settledRows ? state.rowStarts[row + 1] - 1 : tip.settledLength)
                }
            }
            // Each row lies within one segment (see `FeedTip.settled`).
            var span = spans.makeIterator()
            tip.settled.forEachSegment(holding: spans.map(\.0)) { segment, index in
                // Invariant: one call per span.
                let (start, end) = span.next()!
                if body.count > 1 { body.append(Self.punctuation[1..<2]) }
                body.append(segment[index..<(index + end - start)])
            }
        }
        for row in rows[settledRows.count...] {
            let index = row - tip.settledRows
            let start = tip.tailRowStarts[index]
            let end = index + 1 < tip.tail.count ? tip.tailRowStarts[index + 1] - 1 : tip.tailBytes.count
            if body.count > 1 { body.append(Self.punctuation[1..<2]) }
            body.append(tip.tailBytes[start..<end])
        }
        body.append(Self.punctuation[2..<3])
        return body
    }

    private static let punctuation = Array("[,]".utf8)
}
