import ChattModel
import Locking

/// One feed's body as it grows, from one full read of the store to the next. Every version of the feed made on
/// the way (an `EncodedFeed` at a `FeedTip`) shares its bytes, its content hash state, its row offsets, its gzip
/// stream and its id index, so taking in a commit costs the new rows, not the whole feed.
///
/// Rows are settled, or in the tail. Settled rows never move: their bytes, hash, offsets, gzip stream and index
/// only grow, and each settled row is encoded, hashed and compressed once. The tail is the newest rows (those
/// of the latest change and `tailRows` before them), kept as chatts and encoded again for each version, because
/// feed order is by time (migrations/0002): a transaction that began earlier and committed later, in another
/// process, lands before rows already shown. Such a row still goes in its place while it sorts after the settled
/// rows; one that sorts among them needs a full read.
///
/// One body at a time: the newest body made (`base`) lends its settled bytes to the next, and the gzip stream
/// keeps only its last snapshot, so versions that are never read cost no copy, and the feed is held once in each
/// form (plus whatever a slow reader still sends).
final class FeedLineage: Sendable {
    /// Rows kept in the tail before the rows of the latest change.
    static let tailRows = 8

    let kind: ChattFeedCache.Kind

    private struct Body: Sendable {
        /// The newest body made so far; its first `baseSettled` bytes are settled rows, the same in every version.
        var base: [UInt8]
        var baseSettled: Int
        /// The bytes of rows settled after `base` was made.
        var settledExtra: [UInt8] = []
        /// Where each settled row's `[` is.
        var settledRowStarts: [Int]
        /// Over the settled bytes.
        var hasher: ContentHasher
        /// The newest version; only it can take in more rows.
        var tip: FeedTip

        var settledLength: Int { baseSettled + settledExtra.count }
    }

    private struct Compressed: Sendable {
        var stream: GzipStream?
        var failed = false
        /// The last snapshot, and the content hash of the version it is the gzip form of.
        var latest: (bytes: [UInt8], contentHash: UInt64)?
    }

    private struct SettledIndex: Sendable {
        var rows: [ChattID: Int] = [:]
        /// Settled rows looked at so far.
        var indexed = 0
    }

    private let body: Locked<Body>
    private let compressed = Locked(Compressed())
    private let index = Locked(SettledIndex())

    fileprivate init(kind: ChattFeedCache.Kind, body: [UInt8], settledRowStarts: [Int], tip: FeedTip) {
        self.kind = kind
        var hasher = ContentHasher()
        body.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<tip.settledLength])) }
        self.body = Locked(
            Body(base: body, baseSettled: tip.settledLength, settledRowStarts: settledRowStarts, hasher: hasher, tip: tip))
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
        body.withLock { Self.contentHash($0.hasher, tip) }
    }

    // MARK: - New versions

    /// The version after `tip` with `rows` (committed chatts, in any order) taken in, and its content hash; `tip`
    /// itself when every row is in it already; nil when `tip` is not the newest version, or a row sorts among
    /// the settled rows.
    func adding(_ rows: [SequencedChatt], to tip: FeedTip) -> (tip: FeedTip, contentHash: UInt64)? {
        body.withLock { state in
            guard state.tip.serial == tip.serial else { return nil }
            var seen = Set(tip.tail.map(\.sequence))
            let fresh = rows.filter { seen.insert($0.sequence).inserted }
            guard fresh.allSatisfy({ row in tip.boundary.map { $0 < row.position } ?? true }) else { return nil }
            guard !fresh.isEmpty else { return (tip, Self.contentHash(state.hasher, tip)) }
            let merged = (tip.tail + fresh).sorted { $0.position < $1.position }
            return advance(&state, tail: merged, added: fresh.count)
        }
    }

    /// The version after `tip` whose rows after the settled ones are `rows` (all the store holds after
    /// `tip.boundary`, in feed order), and its content hash; nil when `tip` is not the newest version.
    func replacingTail(of tip: FeedTip, with rows: [SequencedChatt]) -> (tip: FeedTip, contentHash: UInt64)? {
        body.withLock { state in
            guard state.tip.serial == tip.serial,
                rows.allSatisfy({ row in tip.boundary.map { $0 < row.position } ?? true })
            else { return nil }
            let known = Set(tip.tail.map(\.sequence))
            if rows.map(\.sequence) == tip.tail.map(\.sequence) { return (tip, Self.contentHash(state.hasher, tip)) }
            return advance(&state, tail: rows, added: rows.count(where: { !known.contains($0.sequence) }))
        }
    }

    /// Settles all but the newest `tailRows + added` rows of `tail` and makes the next tip.
    private func advance(_ state: inout Body, tail: [SequencedChatt], added: Int) -> (tip: FeedTip, contentHash: UInt64) {
        let keep = min(tail.count, Self.tailRows + added)
        var settledRows = state.tip.settledRows
        var boundary = state.tip.boundary
        var bytes: [UInt8] = []
        for row in tail.dropLast(keep) {
            if settledRows > 0 { bytes.append(UInt8(ascii: ",")) }
            state.settledRowStarts.append(state.settledLength + bytes.count)
            ChattRowEncoder.appendRow(row.chatt, includingGeodata: kind == .maps, to: &bytes)
            settledRows += 1
            boundary = row.position
        }
        state.hasher.update(bytes)
        state.settledExtra.append(contentsOf: bytes)
        let next = FeedTip(
            serial: state.tip.serial + 1, settledLength: state.settledLength, settledRows: settledRows,
            boundary: boundary, tail: Array(tail.suffix(keep)), kind: kind)
        state.tip = next
        return (next, Self.contentHash(state.hasher, next))
    }

    // MARK: - Bodies

    /// The body of `tip`: settled bytes from the newest body made and those settled since, then its tail.
    func body(of tip: FeedTip) -> [UInt8] {
        // The big copy happens outside the lock; appends and other versions' bodies go on meanwhile.
        let (base, baseSettled, extra) = body.withLock { state in
            (state.base, state.baseSettled, Array(state.settledExtra.prefix(max(0, tip.settledLength - state.baseSettled))))
        }
        var made: [UInt8] = []
        made.reserveCapacity(tip.length)
        made.append(contentsOf: base[0..<min(baseSettled, tip.settledLength)])
        made.append(contentsOf: extra)
        made.append(contentsOf: tip.tailBytes)
        made.append(UInt8(ascii: "]"))
        body.withLock { state in
            // The newest body made lends its settled bytes to the next: the feed is not held twice.
            guard tip.settledLength >= state.baseSettled else { return }
            state.settledExtra.removeFirst(tip.settledLength - state.baseSettled)
            state.base = made
            state.baseSettled = tip.settledLength
        }
        return made
    }

    /// Where row `row` of `tip` starts in its body; `tip.rowCount` gives the body's length.
    func rowStart(_ row: Int, in tip: FeedTip) -> Int {
        if row >= tip.rowCount { return tip.length }
        if row >= tip.settledRows { return tip.settledLength + tip.tailRowStarts[row - tip.settledRows] }
        return body.withLock { $0.settledRowStarts[row] }
    }

    /// The gzip form of `tip`'s body `identity`, with the content hash of the version it is of: this one, or a
    /// newer one when the stream has already gone past this one's settled rows (a newer version is as good for
    /// whoever asked). Nil if zlib failed. Compresses the rows settled since the last snapshot, then a copy of the
    /// stream finishes the tail.
    func gzip(of tip: FeedTip, identity: [UInt8], contentHash: UInt64) -> (bytes: [UInt8], contentHash: UInt64)? {
        compressed.withLock { state in
            if state.stream == nil, !state.failed {
                state.stream = GzipStream()
                state.failed = state.stream == nil
            }
            guard let stream = state.stream else { return nil }
            if stream.consumed > tip.settledLength { return state.latest }
            let fed = identity[stream.consumed..<tip.settledLength].withUnsafeBytes { stream.append($0) }
            guard fed, let bytes = stream.snapshot(finishingWith: Array(identity[tip.settledLength...])) else {
                state.stream = nil
                state.failed = true
                return nil
            }
            state.latest = (bytes, contentHash)
            return state.latest
        }
    }

    /// The row holding `id` in `tip`, whose body is `identity`; settled rows are indexed on first demand.
    func row(of id: ChattID, in tip: FeedTip, identity: [UInt8]) -> Int? {
        let settled = index.withLock { index -> Int? in
            if index.indexed < tip.settledRows {
                let starts = body.withLock { Array($0.settledRowStarts[index.indexed..<tip.settledRows]) }
                for (offset, start) in starts.enumerated() {
                    if let id = FeedIndex.id(in: identity, rowStart: start) { index.rows[id] = index.indexed + offset }
                }
                index.indexed = tip.settledRows
            }
            return index.rows[id].flatMap { $0 < tip.settledRows ? $0 : nil }
        }
        return settled ?? tip.tailRow(of: id)
    }
}

/// Encodes rows as a full read of the store delivers them, then starts the lineage they make.
struct FeedLineageBuilder {
    let kind: ChattFeedCache.Kind
    /// Whether the rows' sequence numbers are real, so the newest rows can form a tail.
    let keepsTail: Bool
    private var bytes: [UInt8] = [UInt8(ascii: "[")]
    private var rowStarts: [Int] = []
    /// The newest rows read: the tail, and the row before it.
    private var recent: [SequencedChatt] = []

    /// A builder of `kind` rows; `capacity` is the body size expected (the last one's, for instance).
    init(kind: ChattFeedCache.Kind, keepsTail: Bool, capacity: Int = 0) {
        self.kind = kind
        self.keepsTail = keepsTail
        bytes.reserveCapacity(capacity)
    }

    /// Encodes the next row in feed order.
    mutating func append(_ row: SequencedChatt) {
        if !rowStarts.isEmpty { bytes.append(UInt8(ascii: ",")) }
        rowStarts.append(bytes.count)
        ChattRowEncoder.appendRow(row.chatt, includingGeodata: kind == .maps, to: &bytes)
        recent.append(row)
        if recent.count > FeedLineage.tailRows + 1 { recent.removeFirst() }
    }

    /// The lineage of the rows read, which make up `version`, its first tip and that tip's body.
    consuming func finish(version: ChattsVersion) -> (lineage: FeedLineage, tip: FeedTip, body: [UInt8]) {
        let count = rowStarts.count
        let tailCount = keepsTail ? min(FeedLineage.tailRows, count) : 0
        let settledRows = count - tailCount
        let settledLength = tailCount == 0 ? bytes.count : (settledRows == 0 ? 1 : rowStarts[settledRows] - 1)
        var boundary: FeedPosition?
        if settledRows > 0, let last = recent.last {
            // Without real sequence numbers, (last time, highest number) still sorts after every row held.
            boundary = keepsTail
                ? recent[recent.count - tailCount - 1].position
                : FeedPosition(timestamp: last.chatt.timestamp, sequence: version.lastSequence)
        }
        let tip = FeedTip(
            serial: 0, settledLength: settledLength, settledRows: settledRows, boundary: boundary,
            tail: Array(recent.suffix(tailCount)), kind: kind)
        bytes.append(UInt8(ascii: "]"))
        let lineage = FeedLineage(kind: kind, body: bytes, settledRowStarts: Array(rowStarts[0..<settledRows]), tip: tip)
        return (lineage, tip, bytes)
    }
}
