import HTTPCore
import Locking

/// The gzip form of a lineage's versions (`FeedLineage`): one `GzipStream` over its settled bytes, cut into pieces
/// where `GzipPieces` says and fed as versions are asked for, plus the pieces a lineage made by a removal carries
/// from the one before it, taken in as the stream reaches them instead of compressing their input again.
final class LineageGzip: Sendable {
    /// A piece an earlier lineage compressed, at its place in this one's settled bytes.
    struct CarriedPiece: Sendable {
        let input: Range<Int>
        let bytes: ByteSegments
        let crc: UInt32
    }

    private struct State: Sendable {
        var stream: GzipStream?
        var failed = false
        /// The last snapshot, and the content hash of the version it is the gzip form of.
        var latest: (body: HTTPBody, contentHash: UInt64)?
        /// Carried pieces not reached yet, by where their input starts.
        var carried: [Int: CarriedPiece]
    }

    private let state: Locked<State>

    init(carrying pieces: [CarriedPiece] = []) {
        state = Locked(State(carried: Dictionary(pieces.map { ($0.input.lowerBound, $0) }) { first, _ in first }))
    }

    /// The gzip form of `tip`'s body, whose settled pieces end at `pieceEnds` (ascending) and tail pieces at
    /// `tailPieceEnds` (offsets in its tail bytes), with the content hash of the version it is of: this one, or a
    /// newer one when the stream has already gone past this one's settled rows (a newer version is as good for
    /// whoever asked). Nil if zlib failed. Compresses the rows settled since the last snapshot, then a copy of the
    /// stream finishes the tail.
    func gzip(
        of tip: FeedTip, contentHash: UInt64, pieceEnds: [Int], tailPieceEnds: [Int]
    ) -> (body: HTTPBody, contentHash: UInt64)? {
        state.withLock { state in
            if state.stream == nil, !state.failed {
                state.stream = GzipStream()
                state.failed = state.stream == nil
            }
            guard let stream = state.stream else { return nil }
            if stream.consumed > tip.settledLength { return state.latest }
            guard
                Self.feed(stream, tip.settled, upTo: tip.settledLength, pieceEnds: pieceEnds, carried: &state.carried),
                let body = stream.snapshot(finishingWith: tip.tailBytes + [UInt8(ascii: "]")], pieceEnds: tailPieceEnds)
            else {
                state.stream = nil
                state.failed = true
                return nil
            }
            state.latest = (body, contentHash)
            return state.latest
        }
    }

    /// The input bytes the stream deflated itself so far, not carried.
    func deflatedBytes() -> Int {
        state.withLock { $0.stream?.deflated ?? 0 }
    }

    /// The pieces compressed so far, the stream's and those carried but not reached, in order: what a lineage made
    /// from this one may carry.
    private func pieces() -> [CarriedPiece] {
        state.withLock { state in
            var pieces = Array(state.carried.values)
            if let stream = state.stream {
                pieces += stream.pieces.map { CarriedPiece(input: $0.input, bytes: stream.compressed($0), crc: $0.crc) }
            }
            return pieces.sorted { $0.input.lowerBound < $1.input.lowerBound }
        }
    }

    /// The pieces of this lineage (`pieces()`) that a lineage without the rows `gone` (ascending; row i starts at
    /// `starts[i]` here) has too, at their places there (`kept`: where each kept row starts in it): those that hold
    /// no removed row and follow a kept row (or open the feed), so that their input, and so their bytes, are the same.
    func piecesKept(starts: [Int], gone: [Int], kept: [Int]) -> [CarriedPiece] {
        pieces().compactMap { piece in
            // A piece other than the first starts at the "," before its first row.
            let first = piece.input.lowerBound == 0 ? 0 : starts.firstIndex(atLeast: piece.input.lowerBound + 1)
            let last = starts.firstIndex(atLeast: piece.input.upperBound) - 1
            let goneBefore = gone.firstIndex(atLeast: max(first - 1, 0))
            guard first <= last, goneBefore == gone.count || gone[goneBefore] > last else { return nil }
            let (newFirst, newLast) = (first - goneBefore, last - goneBefore)
            let start = first == 0 ? 0 : kept[newFirst] - 1
            let end = kept[newLast] + (piece.input.upperBound - starts[last])
            return CarriedPiece(input: start..<end, bytes: piece.bytes, crc: piece.crc)
        }
    }

    /// Takes `bytes` into `stream` up to offset `length`, ending a piece at each of `pieceEnds` and taking a carried
    /// piece wherever one starts where the stream stands; false if zlib failed.
    private static func feed(
        _ stream: GzipStream, _ bytes: ByteSegments, upTo length: Int, pieceEnds: [Int],
        carried: inout [Int: CarriedPiece]
    ) -> Bool {
        var next = pieceEnds.firstIndex(atLeast: stream.consumed + 1)
        while stream.consumed < length {
            if stream.atPieceStart, let piece = carried[stream.consumed], piece.input.upperBound <= length {
                carried[stream.consumed] = nil
                stream.append(piece: piece.bytes, length: piece.input.count, crc: piece.crc)
                next = pieceEnds.firstIndex(atLeast: stream.consumed + 1)
                continue
            }
            let end = next < pieceEnds.count ? min(pieceEnds[next], length) : length
            var fed = true
            bytes.forEachSlice(in: stream.consumed..<end) { slice in
                fed = fed && slice.withUnsafeBytes { stream.append($0) }
            }
            guard fed else { return false }
            if next < pieceEnds.count, end == pieceEnds[next] {
                guard stream.endPiece() else { return false }
                next += 1
            }
        }
        return true
    }
}
