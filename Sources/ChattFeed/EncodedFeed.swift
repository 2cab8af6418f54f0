import ChangeLog
import ChattModel
import HTTPCore
import JSON
import TaskExecution
import Viewport

/// One version of a feed, shared by every response made from it: its body with its entity tag, made with the
/// version (segments shared with the versions before it, so it costs only the newest rows), and its gzip form
/// and an index of its rows, each made on first demand by one caller (the others wait for it).
///
/// A version is a tip of a `FeedLineage`: made by a full read of the store at a position of the change log, or
/// from the version before it by taking in the chatts of a stretch of the log (`adding`). Its body is the same
/// bytes a full read at its position would give, so its tags are too.
public final class EncodedFeed: Sendable {
    /// The position of the change log it shows: it holds exactly the chatts that position holds.
    public let position: LogPosition
    let lineage: FeedLineage
    let tip: FeedTip
    private let contentHash: UInt64
    /// The body as JSON, with its tag and headers.
    public let identity: FeedRepresentation
    private let gzipForm: SingleFlight<FeedRepresentation>

    /// The first version of the lineage `builder` has read, at `position`.
    convenience init(_ builder: consuming FeedLineageBuilder, at position: LogPosition) {
        let (lineage, tip) = builder.finish()
        lineage.packViewportSoon()
        self.init(lineage: lineage, tip: tip, contentHash: lineage.contentHash(of: tip), position: position)
    }

    /// A version of `lineage` at `tip`; its gzip form is made when first asked for.
    private convenience init(lineage: FeedLineage, tip: FeedTip, contentHash: UInt64, position: LogPosition) {
        let identity = FeedRepresentation(body: tip.body, contentHash: contentHash, coding: nil)
        self.init(
            lineage: lineage, tip: tip, contentHash: contentHash, position: position, identity: identity,
            gzip: Self.gzipFlight(lineage, tip, contentHash, identity))
    }

    private init(
        lineage: FeedLineage, tip: FeedTip, contentHash: UInt64, position: LogPosition,
        identity: FeedRepresentation, gzip: SingleFlight<FeedRepresentation>
    ) {
        self.lineage = lineage
        self.tip = tip
        self.contentHash = contentHash
        self.position = position
        self.identity = identity
        gzipForm = gzip
    }

    /// The same bytes at another position (the log moved on with no chatt for this feed), sharing whatever was
    /// already made for them.
    func moved(to position: LogPosition) -> EncodedFeed {
        EncodedFeed(
            lineage: lineage, tip: tip, contentHash: contentHash, position: position, identity: identity,
            gzip: gzipForm)
    }

    /// Which feed it is a version of.
    public var kind: ChattFeed.Kind { lineage.kind }

    /// The number of rows.
    public var rowCount: Int { tip.rowCount }

    /// The gzip representation if some caller of `gzipped()` has made it; never waits.
    public var gzippedIfReady: FeedRepresentation? {
        gzipForm.landed()
    }

    /// The gzip representation, made by the first caller's flight (the others suspend until it lands): of this
    /// version, or of a newer one of the same lineage when the gzip stream has gone past this one. Should zlib fail,
    /// gzip clients get the identity body: always acceptable.
    public func gzipped() async -> FeedRepresentation {
        // Invariant: with no deadline, a flight's value always comes.
        await gzipForm.value(of: .first)!
    }

    /// The one flight that makes the gzip form of `tip`.
    private static func gzipFlight(
        _ lineage: FeedLineage, _ tip: FeedTip, _ contentHash: UInt64, _ identity: FeedRepresentation
    ) -> SingleFlight<FeedRepresentation> {
        SingleFlight {
            guard let (body, hash) = lineage.gzip(of: tip, contentHash: contentHash) else { return identity }
            return FeedRepresentation(body: body, contentHash: hash, coding: "gzip", variant: Gzip.feedVariant)
        }
    }

    /// The id → row index.
    public func rowIndex() -> FeedIndex {
        FeedIndex(self)
    }

    /// A JSON array of the rows in `range` (within `0..<rowCount`): slices of the body's own segments between a
    /// bracket and a bracket, so any number of answers cut from one version hold no bytes of their own.
    public func rows(_ range: Range<Int>) -> HTTPBody {
        guard !range.isEmpty else { return HTTPBody(Self.brackets[...]) }
        // Row i runs from its "[" to just before the "," or "]" that follows it.
        let start = lineage.rowStart(range.lowerBound, in: tip)
        let end = lineage.rowStart(range.upperBound, in: tip) - 1
        var body = HTTPBody(Self.brackets[..<1])
        identity.body.forEachSlice(in: start..<end) { body.append($0) }
        body.append(Self.brackets[1...])
        return body
    }

    /// The rows from row `from` on that lie in `box`, in feed order: the first `limit`, or the last `limit` when
    /// `newest`.
    public func rows(in box: BoundingBox, from: Int, limit: Int, newest: Bool) -> [Int] {
        lineage.rows(in: box, of: tip, from: from, limit: limit, newest: newest)
    }

    /// A JSON array of the rows at `rows` (rising, within `0..<rowCount`): slices of the body's own segments.
    public func body(ofRows rows: [Int]) -> HTTPBody {
        lineage.body(ofRows: rows, in: tip)
    }

    /// `GET /getmaps/clusters`' GeoJSON body for `box` on `grid` (`ClusterFeatures`).
    public func clusters(in box: BoundingBox, on grid: ClusterGrid) -> [UInt8] {
        let tally = lineage.clusters(in: box, on: grid, of: tip)
        return ClusterFeatures.collection(tally) { lineage.rowBytes(at: $0, in: tip) }
    }

    /// `clusters(in:on:)` of the whole map, as a response's identity and gzip forms: made once for this version's
    /// rows, whoever asks (`WholeMapClusters`).
    public func wholeMapClusters(
        on grid: ClusterGrid
    ) async -> (identity: FeedRepresentation, gzip: FeedRepresentation) {
        let answer = await lineage.wholeMapClusters.answer(zoom: grid.zoom, serial: tip.serial) { [self] in
            // Kept for the version, so in no more storage than its bytes.
            let body = HTTPBody(clusters(in: .wholeMap, on: grid).inStorageOfItsOwnSize)
            let identity = FeedRepresentation(identity: body, contentType: FeedRepresentation.geoJSON)
            return WholeMapClusters.Answer(identity: identity, gzip: identity.gzipped())
        }
        return (answer.identity, answer.gzip)
    }

    /// `[]`: the empty slice, and the ends of every other.
    private static let brackets = Array("[]".utf8)

    // MARK: - Later versions

    /// The version with `slice`'s chatts taken in and its removed chatts left out, at the slice's end; this one
    /// moved there when that changes nothing; nil when a chatt cannot be placed without a full read (it sorts among
    /// the settled rows), or a later version of the lineage exists.
    func adding(_ slice: LogSlice) -> EncodedFeed? {
        guard let (next, hash) = lineage.adding(slice.ticks.chatts, to: tip) else { return nil }
        // A chatt posted and removed in one slice is taken in, then left out: removals come after their posts.
        let removed = slice.ticks.removals.map(\.position)
        if !removed.isEmpty, let (lineage, first) = lineage.removing(removed, from: next) {
            return EncodedFeed(
                lineage: lineage, tip: first, contentHash: lineage.contentHash(of: first), position: slice.end)
        }
        guard next.serial != tip.serial else { return moved(to: slice.end) }
        return EncodedFeed(lineage: lineage, tip: next, contentHash: hash, position: slice.end)
    }
}
