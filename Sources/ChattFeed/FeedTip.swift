import ChattModel
import HTTPCore

/// Where one version of a feed stands in its `FeedLineage`: how much of the lineage's settled part it shows, and
/// its tail, the newest rows, encoded for this version alone. Its body is the settled bytes, the tail bytes, `]`.
struct FeedTip: Sendable {
    /// Which tip of the lineage this is; every change to the lineage makes a new one.
    let serial: UInt64
    /// The settled bytes this version shows, from the opening `[`: segments shared with the lineage and with the
    /// versions before and after it. Each holds whole rows (with the `,` before them).
    let settled: ByteSegments
    /// The settled rows this version shows.
    let settledRows: Int
    /// The position of the last settled row; nil while no row is settled.
    let boundary: FeedPosition?
    /// The newest rows, in feed order.
    let tail: [SequencedChatt]
    /// `tail` encoded: each row after a `,`, except a row that is the feed's first.
    let tailBytes: [UInt8]
    /// Where each tail row's `[` is in `tailBytes`.
    let tailRowStarts: [Int]
    /// Where each gzip piece in `tailBytes` ends (`GzipPieces`).
    let tailPieceEnds: [Int]

    /// The length of the settled bytes.
    var settledLength: Int { settled.count }
    /// The rows this version shows.
    var rowCount: Int { settledRows + tail.count }
    /// The length of this version's body, with its closing `]`.
    var length: Int { settledLength + tailBytes.count + 1 }

    /// This version's body: its settled segments, its tail, `]`. Nothing is copied.
    var body: HTTPBody {
        var body = settled
        body.append(tailBytes[...])
        body.append(Self.closing[...])
        return body
    }

    private static let closing = [UInt8(ascii: "]")]

    /// A tip over the `settledRows` settled rows in `settled`, with `tail` encoded as `kind` rows.
    init(
        serial: UInt64, settled: ByteSegments, settledRows: Int, boundary: FeedPosition?,
        tail: [SequencedChatt], kind: ChattFeed.Kind
    ) {
        self.serial = serial
        self.settled = settled
        self.settledRows = settledRows
        self.boundary = boundary
        self.tail = tail
        var bytes: [UInt8] = []
        var starts: [Int] = []
        var ends: [Int] = []
        starts.reserveCapacity(tail.count)
        for (index, row) in tail.enumerated() {
            if index > 0 || settledRows > 0 { bytes.append(UInt8(ascii: ",")) }
            starts.append(bytes.count)
            ChattRowEncoder.appendRow(row.chatt, includingGeodata: kind == .maps, to: &bytes)
            if GzipPieces.endsPiece(after: row.chatt.id) { ends.append(bytes.count) }
        }
        tailBytes = bytes
        tailRowStarts = starts
        tailPieceEnds = ends
    }

    /// The tail row holding `id`, counted from the feed's first row.
    func tailRow(of id: ChattID) -> Int? {
        tail.firstIndex { ChattID(Substring($0.chatt.id)) == id }.map { settledRows + $0 }
    }
}
