import ChattModel
import HTTPCore
import Locking
import Viewport

/// One feed's body as it grows, from one full read of the store to the next. Every version of the feed made on
/// the way (an `EncodedFeed` at a `FeedTip`) shares its bytes, its content hash state, its row offsets, its gzip
/// stream and its id index, so taking in a commit costs the new rows, not the whole feed.
///
/// Rows are settled, or in the tail. Settled rows never move: their bytes, hash, offsets, gzip stream and index
/// only grow, and each settled row is encoded, hashed and compressed once. The tail is the newest rows (those
/// of the latest change and `tailRows` before them), kept as chatts and encoded again for each version, because
/// feed order is by time (migrations/0002): a transaction that began earlier and committed later, in another
/// process, lands before rows already shown. Such a row still goes in its place among the newest rows while it
/// sorts after the settled rows; one that sorts among them needs a full read.
///
/// The settled bytes are segments (`ByteSegments`, compacted as they grow), and so is the gzip stream's output:
/// a version's body is the segments settled so far plus its own tail, and its gzip form the stream's output so
/// far plus its own finish. A version costs its tail, not a copy of the feed, and a reader still sending an older
/// version holds only the segments that no newer version shares. A removal starts a new lineage from the rows
/// kept, which carries the gzip pieces (`GzipPieces`) the removed rows were not in.
final class FeedLineage: Sendable {
    /// Rows kept in the tail before the rows of the latest change.
    static let tailRows = 8
    /// The most segments a lineage made by a removal starts with, sharing its predecessor's bytes.
    static let mostSegments = 64

    let kind: ChattFeed.Kind

    struct Settled: Sendable {
        var bytes: ByteSegments
        /// Where each settled row's `[` is.
        var rowStarts: [Int]
        /// Each settled row's sequence number, which with its timestamp places it in feed order.
        var rowSequences: [Int64]
        /// Where each gzip piece of the settled bytes ends: just after a row `GzipPieces` ends one with.
        var pieceEnds: [Int]
        /// Where each settled row is on the map (a maps feed's; a chatts feed has none).
        var locations: RowLocations
        /// Over the settled bytes.
        var hasher: ContentHasher
        /// The newest version; only it can take in more rows.
        var tip: FeedTip
    }

    private struct SettledIndex: Sendable {
        var rows: [ChattID: Int] = [:]
        /// Settled rows looked at so far.
        var indexed = 0
    }

    let settled: Locked<Settled>
    /// The gzip form of its versions.
    let compressed: LineageGzip
    private let index = Locked(SettledIndex())
    /// Which settled rows lie in a box (see `FeedLineage+Viewport`).
    let viewport = Locked(ViewportIndex())
    /// The clusters of the whole map for its newest version asked.
    let wholeMapClusters = WholeMapClusters()

    /// A lineage whose settled rows are these (see `FeedLineageBuilder`, and `removing`).
    init(
        kind: ChattFeed.Kind, settled bytes: ByteSegments, rowStarts: [Int], rowSequences: [Int64], pieceEnds: [Int],
        locations: RowLocations, tip: FeedTip, carrying pieces: [LineageGzip.CarriedPiece] = []
    ) {
        self.kind = kind
        var hasher = ContentHasher()
        hasher.update(bytes)
        settled = Locked(Settled(
            bytes: bytes, rowStarts: rowStarts, rowSequences: rowSequences, pieceEnds: pieceEnds,
            locations: locations, hasher: hasher, tip: tip))
        compressed = LineageGzip(carrying: pieces)
    }

    /// The content hash of the newest version's body, from the settled bytes' hash state.
    private static func contentHash(_ hasher: ContentHasher, _ tip: FeedTip) -> UInt64 {
        var hasher = hasher
        hasher.update(tip.tailBytes)
        hasher.update([UInt8(ascii: "]")])
        return hasher.finalize()
    }

    /// The content hash of `tip`, which must be the newest version (as it is when the lineage has just been made).
    func contentHash(of tip: FeedTip) -> UInt64 {
        settled.withLock { Self.contentHash($0.hasher, tip) }
    }

    // MARK: - New versions

    /// The version after `tip` with `rows` (committed chatts, in any order) taken in, and its content hash; `tip`
    /// itself when every row is in it already; nil when `tip` is not the newest version, or a row sorts among
    /// the settled rows.
    func adding(_ rows: [SequencedChatt], to tip: FeedTip) -> (tip: FeedTip, contentHash: UInt64)? {
        settled.withLock { state in
            guard state.tip.serial == tip.serial else { return nil }
            var seen = Set(tip.tail.map(\.sequence))
            let fresh = rows.filter { seen.insert($0.sequence).inserted }
            guard fresh.allSatisfy({ row in tip.boundary.map { $0 < row.position } ?? true }) else { return nil }
            guard !fresh.isEmpty else { return (tip, Self.contentHash(state.hasher, tip)) }
            let merged = (tip.tail + fresh).sorted { $0.position < $1.position }
            return advance(&state, tail: merged, added: fresh.count)
        }
    }

    /// Settles all but the newest `tailRows + added` rows of `tail` and makes the next tip.
    private func advance(_ state: inout Settled, tail: [SequencedChatt], added: Int) -> (tip: FeedTip, contentHash: UInt64) {
        let keep = min(tail.count, Self.tailRows + added)
        var settledRows = state.tip.settledRows
        var boundary = state.tip.boundary
        var bytes: [UInt8] = []
        for row in tail.dropLast(keep) {
            if settledRows > 0 { bytes.append(UInt8(ascii: ",")) }
            state.rowStarts.append(state.bytes.count + bytes.count)
            state.rowSequences.append(row.sequence)
            ChattRowEncoder.appendRow(row.chatt, includingGeodata: kind == .maps, to: &bytes)
            if GzipPieces.endsPiece(after: row.chatt.id) { state.pieceEnds.append(state.bytes.count + bytes.count) }
            if kind == .maps { state.locations.append(row.chatt.location) }
            settledRows += 1
            boundary = row.position
        }
        state.hasher.update(bytes)
        state.bytes.append(compacting: bytes)
        let next = FeedTip(
            serial: state.tip.serial + 1, settled: state.bytes, settledRows: settledRows,
            boundary: boundary, tail: Array(tail.suffix(keep)), kind: kind)
        state.tip = next
        return (next, Self.contentHash(state.hasher, next))
    }

    /// The first version of a new lineage: `tip`'s rows but those at `places` (removed chatts', found by binary
    /// search), and its content hash; nil when `tip` is not the newest version, or holds none of them. The settled
    /// rows kept are shared with the new lineage, with the gzip pieces that held none of the removed rows; its index
    /// starts over. The store is not read.
    func removing(_ places: [FeedPosition], from tip: FeedTip) -> (lineage: FeedLineage, tip: FeedTip)? {
        guard
            let (starts, sequences, ends, locations) = settled.withLock({
                state -> ([Int], [Int64], [Int], RowLocations)? in
                state.tip.serial == tip.serial
                    ? (state.rowStarts, state.rowSequences, state.pieceEnds, state.locations) : nil
            })
        else { return nil }
        let rows = places.compactMap { place -> Int? in
            let row = Self.firstRow(after: place, in: tip, starts: starts, sequences: sequences) - 1
            guard row >= 0, Self.position(of: row, in: tip, starts: starts, sequences: sequences) == place else {
                return nil
            }
            return row
        }
        guard !rows.isEmpty else { return nil }
        let gone = Set(rows)
        // The kept rows come in runs between removed ones; each run's bytes (with the "," before it, after the
        // first) are shared with this lineage's, not copied, and its offsets move by the bytes left out before it.
        var ranges: [Range<Int>] = [0..<1]  // "["
        var length = 1
        var kept: [Int] = []
        var keptSequences: [Int64] = []
        var keptEnds: [Int] = []
        var keptRows: [ClosedRange<Int>] = []
        kept.reserveCapacity(tip.settledRows)
        keptSequences.reserveCapacity(tip.settledRows)
        let goneInOrder = gone.sorted()
        var runStart = 0
        for removed in goneInOrder.filter({ $0 < tip.settledRows }) + [tip.settledRows] {
            defer { runStart = removed + 1 }
            guard runStart < removed else { continue }
            let (first, last) = (runStart, removed - 1)
            // Row i runs from its "[" to the "," before the next row, or to the end of the settled bytes.
            let end = last + 1 < tip.settledRows ? starts[last + 1] - 1 : tip.settledLength
            let from = kept.isEmpty ? starts[first] : starts[first] - 1
            let shift = length - from
            kept += starts[first...last].map { $0 + shift }
            keptSequences += sequences[first...last]
            keptRows.append(first...last)
            // Every piece end is a row's end: those after the run's first "[" up to its end are its rows'.
            keptEnds += ends[ends.firstIndex(atLeast: starts[first] + 1)..<ends.firstIndex(atLeast: end + 1)]
                .map { $0 + shift }
            if let previous = ranges.last, previous.upperBound == from {
                ranges[ranges.count - 1] = previous.lowerBound..<end
            } else {
                ranges.append(from..<end)
            }
            length += end - from
        }
        var segments = ByteSegments()
        for range in ranges { tip.settled.forEachSlice(in: range) { segments.append($0) } }
        // Each removal splits a segment in two: past a few dozen, one copy puts them back together.
        if segments.segments.count > Self.mostSegments { segments = ByteSegments(segments.bytes) }
        let carried = compressed.piecesKept(starts: starts, gone: goneInOrder, kept: kept)
        let tail = tip.tail.enumerated().filter { !gone.contains(tip.settledRows + $0.offset) }.map(\.element)
        // The boundary stays the removed rows' own when theirs was: a row sorting after it is still placed.
        let first = FeedTip(
            serial: 0, settled: segments, settledRows: kept.count, boundary: tip.boundary, tail: tail, kind: kind)
        let lineage = FeedLineage(
            kind: kind, settled: segments, rowStarts: kept, rowSequences: keptSequences, pieceEnds: keptEnds,
            locations: kind == .maps ? locations.keeping(keptRows.joined()) : RowLocations(), tip: first,
            carrying: carried)
        lineage.carryViewportSoon(from: self, removing: goneInOrder.filter { $0 < tip.settledRows })
        return (lineage, first)
    }

    // MARK: - Row offsets, gzip, index

    /// Where row `row` of `tip` starts in its body; `tip.rowCount` gives the body's length.
    func rowStart(_ row: Int, in tip: FeedTip) -> Int {
        if row >= tip.rowCount { return tip.length }
        if row >= tip.settledRows { return tip.settledLength + tip.tailRowStarts[row - tip.settledRows] }
        return settled.withLock { $0.rowStarts[row] }
    }

    /// The gzip form of `tip`'s body, with the content hash of the version it is of (see `LineageGzip.gzip`).
    func gzip(of tip: FeedTip, contentHash: UInt64) -> (body: HTTPBody, contentHash: UInt64)? {
        let ends = settled.withLock { $0.pieceEnds }
        return compressed.gzip(of: tip, contentHash: contentHash, pieceEnds: ends, tailPieceEnds: tip.tailPieceEnds)
    }

    /// The first row of `tip` that sorts after `place` in feed order (`tip.rowCount` when none does): a binary search
    /// over the rows' timestamps (read from their bytes) and sequence numbers.
    func firstRow(after place: FeedPosition, in tip: FeedTip) -> Int {
        let (starts, sequences) = settled.withLock { ($0.rowStarts, $0.rowSequences) }
        return Self.firstRow(after: place, in: tip, starts: starts, sequences: sequences)
    }

    private static func firstRow(
        after place: FeedPosition, in tip: FeedTip, starts: [Int], sequences: [Int64]
    ) -> Int {
        var low = 0
        var high = tip.rowCount
        while low < high {
            let middle = (low + high) / 2
            // A row the encoder wrote always has its timestamp; one that somehow does not counts as after.
            if let found = position(of: middle, in: tip, starts: starts, sequences: sequences), !(place < found) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    /// Where row `row` of `tip` stands in feed order: a settled row's timestamp read from its bytes, with its
    /// sequence number; nil for a row that somehow has none.
    private static func position(of row: Int, in tip: FeedTip, starts: [Int], sequences: [Int64]) -> FeedPosition? {
        if row >= tip.settledRows { return tip.tail[row - tip.settledRows].position }
        var timestamp: String?
        // Each row lies within one segment (see `FeedTip.settled`).
        tip.settled.forEachSegment(holding: [starts[row]]) { segment, start in
            timestamp = FeedIndex.timestamp(in: segment, rowStart: start)
        }
        return timestamp.map { FeedPosition(timestamp: $0, sequence: sequences[row]) }
    }

    /// The row holding `id` in `tip`; settled rows are indexed on first demand.
    func row(of id: ChattID, in tip: FeedTip) -> Int? {
        let settled = index.withLock { index -> Int? in
            if index.indexed < tip.settledRows {
                let starts = self.settled.withLock { Array($0.rowStarts[index.indexed..<tip.settledRows]) }
                var row = index.indexed
                // Each row lies within one segment (see `FeedTip.settled`).
                tip.settled.forEachSegment(holding: starts) { segment, position in
                    if let id = FeedIndex.id(in: segment, rowStart: position) { index.rows[id] = row }
                    row += 1
                }
                index.indexed = tip.settledRows
            }
            return index.rows[id].flatMap { $0 < tip.settledRows ? $0 : nil }
        }
        return settled ?? tip.tailRow(of: id)
    }
}
