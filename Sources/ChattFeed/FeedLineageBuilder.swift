import ChattModel
import HTTPCore
import Viewport

/// Encodes rows as a full read of the store delivers them, then starts the lineage they make.
struct FeedLineageBuilder {
    let kind: ChattFeed.Kind
    private var bytes: [UInt8] = [UInt8(ascii: "[")]
    private var rowStarts: [Int] = []
    private var rowSequences: [Int64] = []
    private var pieceEnds: [Int] = []
    private var locations = RowLocations()
    /// The newest rows read: the tail, and the row before it.
    private var recent: [SequencedChatt] = []

    /// A builder of `kind` rows; `capacity` is the body size expected (the last one's, for instance).
    init(kind: ChattFeed.Kind, capacity: Int = 0) {
        self.kind = kind
        bytes.reserveCapacity(capacity)
    }

    /// Encodes the next row in feed order.
    mutating func append(_ row: SequencedChatt) {
        if !rowStarts.isEmpty { bytes.append(UInt8(ascii: ",")) }
        rowStarts.append(bytes.count)
        rowSequences.append(row.sequence)
        ChattRowEncoder.appendRow(row.chatt, includingGeodata: kind == .maps, to: &bytes)
        if GzipPieces.endsPiece(after: row.chatt.id) { pieceEnds.append(bytes.count) }
        if kind == .maps { locations.append(row.chatt.location) }
        recent.append(row)
        if recent.count > FeedLineage.tailRows + 1 { recent.removeFirst() }
    }

    /// The lineage of the rows read, and its first tip.
    consuming func finish() -> (lineage: FeedLineage, tip: FeedTip) {
        let count = rowStarts.count
        let tailCount = min(FeedLineage.tailRows, count)
        let settledRows = count - tailCount
        let settledLength = tailCount == 0 ? bytes.count : (settledRows == 0 ? 1 : rowStarts[settledRows] - 1)
        let boundary = settledRows > 0 ? recent[recent.count - tailCount - 1].position : nil
        // The bytes read are the first segment, tail rows and all: the tip shows only their settled part.
        let settled = ByteSegments(bytes[0..<settledLength])
        let tip = FeedTip(
            serial: 0, settled: settled, settledRows: settledRows, boundary: boundary,
            tail: Array(recent.suffix(tailCount)), kind: kind)
        let lineage = FeedLineage(
            kind: kind, settled: settled, rowStarts: Array(rowStarts[0..<settledRows]),
            rowSequences: Array(rowSequences[0..<settledRows]), pieceEnds: pieceEnds.filter { $0 <= settledLength },
            locations: locations.prefix(kind == .maps ? settledRows : 0), tip: tip)
        return (lineage, tip)
    }
}
