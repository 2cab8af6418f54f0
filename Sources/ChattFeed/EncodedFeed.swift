import ChattModel
import JSON

/// One feed as encoded at one generation of the cache, shared by every response made from it: the body
/// with its entity tag, and, each made on first demand by one caller, its gzip form and an index of its rows.
public final class EncodedFeed: Sendable {
    /// The cache generation read before the snapshot query that this feed shows began.
    let generation: UInt64
    /// The store version the snapshot was read at.
    let version: ChattsVersion
    /// The body as JSON, with its tag and headers.
    public let identity: FeedRepresentation
    /// Where each row starts, then the body's length (see `ChattRowEncoder.encode`).
    private let rowBounds: [Int]
    private let contentHash: UInt64
    private let gzip = Lazy<FeedRepresentation>()
    private let index = Lazy<FeedIndex>()

    /// Encodes `snapshot` as `kind` rows.
    init(_ kind: ChattFeedCache.Kind, snapshot: ChattSnapshot, generation: UInt64) {
        let encoded = ChattRowEncoder.encode(snapshot.chatts, includingGeodata: kind == .maps)
        self.generation = generation
        version = snapshot.version
        rowBounds = encoded.rowBounds
        contentHash = ContentHash.hash(encoded.body)
        identity = FeedRepresentation(body: encoded.body, contentHash: contentHash, coding: nil)
    }

    /// The number of rows.
    public var rowCount: Int { rowBounds.count - 1 }

    /// The gzip representation if some caller of `gzipped()` has made it; never waits.
    public var gzippedIfReady: FeedRepresentation? {
        gzip.ifReady()
    }

    /// The gzip representation, compressed by the first caller (the others wait for it). Should zlib fail, gzip
    /// clients get the identity body: always acceptable.
    public func gzipped() -> FeedRepresentation {
        gzip.get {
            guard let compressed = Gzip.compress(identity.body) else { return identity }
            return FeedRepresentation(
                body: compressed, contentHash: contentHash, coding: "gzip", variant: String(Gzip.feedLevel))
        }
    }

    /// The id → row index, built by the first caller (the others wait for it).
    public func rowIndex() -> FeedIndex {
        index.get { FeedIndex(body: identity.body, rowBounds: rowBounds) }
    }

    /// A JSON array of the rows in `range` (within `0..<rowCount`), copied from the body without re-encoding.
    public func rows(_ range: Range<Int>) -> [UInt8] {
        guard !range.isEmpty else { return Array("[]".utf8) }
        let slice = identity.body[rowBounds[range.lowerBound]..<(rowBounds[range.upperBound] - 1)]
        var out: [UInt8] = []
        out.reserveCapacity(slice.count + 2)
        out.append(UInt8(ascii: "["))
        out.append(contentsOf: slice)
        out.append(UInt8(ascii: "]"))
        return out
    }
}
