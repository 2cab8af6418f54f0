import ChattModel
import HTTPCore
import JSON

/// One version of a feed, shared by every response made from it: its body with its entity tag, made with the
/// version (segments shared with the versions before it, so it costs only the newest rows), and its gzip form
/// and an index of its rows, each made on first demand by one caller (the others wait for it).
///
/// A version is a tip of a `FeedLineage`: made by a full read of the store, or from the version before it by
/// taking in a commit's rows (`adding`) or the rows a re-read found (`caughtUp`). Its body is the same bytes a
/// full read of the same chatts would give, so its tags are too.
public final class EncodedFeed: Sendable {
    /// The cache generation read before the store was read for this version (or its rows taken in).
    let generation: UInt64
    /// The store version it shows.
    let version: ChattsVersion
    let lineage: FeedLineage
    let tip: FeedTip
    private let contentHash: UInt64
    /// The body as JSON, with its tag and headers.
    public let identity: FeedRepresentation
    private let gzipForm: Lazy<FeedRepresentation>

    /// The first version of the lineage `builder` has read.
    convenience init(_ builder: consuming FeedLineageBuilder, version: ChattsVersion, generation: UInt64) {
        let (lineage, tip) = builder.finish(version: version)
        self.init(
            lineage: lineage, tip: tip, contentHash: lineage.contentHash(of: tip), version: version,
            generation: generation)
    }

    /// A version of `lineage` at `tip`; its gzip form is made when first asked for.
    private convenience init(
        lineage: FeedLineage, tip: FeedTip, contentHash: UInt64, version: ChattsVersion, generation: UInt64
    ) {
        self.init(
            lineage: lineage, tip: tip, contentHash: contentHash, version: version, generation: generation,
            identity: FeedRepresentation(body: tip.body, contentHash: contentHash, coding: nil), gzip: Lazy())
    }

    private init(
        lineage: FeedLineage, tip: FeedTip, contentHash: UInt64, version: ChattsVersion, generation: UInt64,
        identity: FeedRepresentation, gzip: Lazy<FeedRepresentation>
    ) {
        self.lineage = lineage
        self.tip = tip
        self.contentHash = contentHash
        self.version = version
        self.generation = generation
        self.identity = identity
        gzipForm = gzip
    }

    /// The same bytes at another generation, sharing whatever was already made for them.
    func retagged(_ generation: UInt64, version: ChattsVersion? = nil) -> EncodedFeed {
        EncodedFeed(
            lineage: lineage, tip: tip, contentHash: contentHash, version: version ?? self.version,
            generation: generation, identity: identity, gzip: gzipForm)
    }

    /// The number of rows.
    public var rowCount: Int { tip.rowCount }

    /// The store's commit position this version shows: it holds exactly every chatt committed up to it.
    public var position: CommitPosition { version.position }

    /// The gzip representation if some caller of `gzipped()` has made it; never waits.
    public var gzippedIfReady: FeedRepresentation? {
        gzipForm.ifReady()
    }

    /// The gzip representation, made by the first caller (the others suspend until it is): of this version, or of
    /// a newer one of the same lineage when the gzip stream has gone past this one. Should zlib fail, gzip clients
    /// get the identity body: always acceptable.
    public func gzipped() async -> FeedRepresentation {
        await gzipForm.get(makeGzip)
    }

    private func makeGzip() -> FeedRepresentation {
        guard let (body, hash) = lineage.gzip(of: tip, contentHash: contentHash) else { return identity }
        return FeedRepresentation(body: body, contentHash: hash, coding: "gzip", variant: String(Gzip.feedLevel))
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

    /// `[]`: the empty slice, and the ends of every other.
    private static let brackets = Array("[]".utf8)

    // MARK: - Later versions

    /// The version with `batch` taken in, at `generation`; this one (retagged) when it holds the batch already;
    /// nil when a row cannot be placed without a full read, or a later version exists, or the batch does not follow
    /// this version's position directly (another commit came between, which only a read of the store can place).
    func adding(_ batch: ChattBatch, generation: UInt64) -> EncodedFeed? {
        let position = version.position
        if position.epoch == batch.position.epoch, position.count >= batch.position.count {
            return retagged(generation)
        }
        guard batch.isContiguous, batch.position.epoch == position.epoch, batch.previous == position.count,
            let (next, hash) = lineage.adding(batch.chatts, to: tip)
        else { return nil }
        guard next.serial != tip.serial else { return retagged(generation) }
        let added = next.rowCount - tip.rowCount
        let last = batch.chatts.map(\.sequence).max() ?? 0
        let version = ChattsVersion(
            count: version.count + added, lastSequence: max(version.lastSequence, last), position: batch.position)
        return EncodedFeed(lineage: lineage, tip: next, contentHash: hash, version: version, generation: generation)
    }

    /// The version that `delta` (the store's chatts after this version's settled rows, and its version) shows,
    /// at `generation`; nil when the two together are not the whole store, or a row cannot be placed.
    func caughtUp(with delta: ChattDelta, generation: UInt64) -> EncodedFeed? {
        guard delta.version.count == tip.settledRows + delta.chatts.count,
            let (next, hash) = lineage.replacingTail(of: tip, with: delta.chatts)
        else { return nil }
        guard next.serial != tip.serial else { return retagged(generation, version: delta.version) }
        return EncodedFeed(
            lineage: lineage, tip: next, contentHash: hash, version: delta.version, generation: generation)
    }
}
