@testable import ChattFeed
import ChattModel
import CZlib
import HTTPCore
import TestSupport
import Testing

/// Bytes shaped like a feed's: rows with a random-looking id, so that some of it does not compress.
private func feedLikeBytes(rows: Int) -> [UInt8] {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    var text = "["
    for row in 0..<rows {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        if row > 0 { text += "," }
        text += #"["user\#(row % 37)","message \#(row)","\#(String(state, radix: 16))","2026-03-25T08:11:59.\#(100_000 + row)Z",null]"#
    }
    return Array((text + "]").utf8)
}

/// Random piece ends, ascending, strictly inside `0..<count`.
private func randomPieceEnds(below count: Int, every mean: Int, using generator: inout some RandomNumberGenerator) -> [Int] {
    guard count > 1 else { return [] }
    return (1..<count).filter { _ in Int.random(in: 0..<mean, using: &generator) == 0 }
}

/// zlib's own gzip wrapper over `bytes`, in one call: what a feed with no piece ends must match.
private func zlibGzip(_ bytes: [UInt8]) -> [UInt8]? {
    var stream = z_stream()
    guard czlib_deflate_init_gzip(&stream, Gzip.feedLevel) == Z_OK else { return nil }
    defer { deflateEnd(&stream) }
    var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))))
    let status = bytes.withUnsafeBufferPointer { input in
        output.withUnsafeMutableBufferPointer { out in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            stream.next_out = out.baseAddress
            stream.avail_out = uInt(out.count)
            return deflate(&stream, Z_FINISH)
        }
    }
    guard status == Z_STREAM_END else { return nil }
    return Array(output[0..<Int(stream.total_out)])
}

/// `GzipStream`: snapshots of a growing input cut into pieces, finished from a copy of the stream.
@Suite struct GzipStreamTests {
    @Test func aStreamsSnapshotsDecompressToTheSameBytes() async throws {
        let input = feedLikeBytes(rows: 400)
        let stream = try #require(GzipStream())
        var offset = 0
        var generator = SystemRandomNumberGenerator()
        while offset < input.count - 1 {
            let step = min(input.count - 1 - offset, Int.random(in: 1...3000, using: &generator))
            #expect(input[offset..<(offset + step)].withUnsafeBytes { stream.append($0) })
            offset += step
            if Bool.random(using: &generator) { #expect(stream.endPiece()) }
            let snapshot = try #require(stream.snapshot(finishingWith: [UInt8(ascii: "]")]))
            #expect(gunzip(snapshot.bytes) == Array(input[0..<offset]) + [UInt8(ascii: "]")])
        }
        #expect(stream.consumed == input.count - 1 && stream.deflated == stream.consumed)
    }

    @Test(arguments: [0, 1, 30, 2000])
    func withNoPiecesTheBytesAreZlibsOwnGzip(_ rows: Int) throws {
        let input = feedLikeBytes(rows: rows)
        #expect(Gzip.compress(input) == zlibGzip(input))
        let stream = try #require(GzipStream())
        #expect(input.dropLast().withUnsafeBytes { stream.append($0) })
        #expect(stream.snapshot(finishingWith: [UInt8(ascii: "]")])?.bytes == zlibGzip(input))
    }

    /// What makes a gzip tag honest across processes: the bytes depend on the input and its pieces only, not on
    /// how it grew.
    @Test(arguments: [0, 1, 30, 2000])
    func everyHistoryOfAppendsPiecesAndSnapshotsGivesTheOneShotBytes(_ rows: Int) async throws {
        var generator = SystemRandomNumberGenerator()
        let input = feedLikeBytes(rows: rows)
        let ends = randomPieceEnds(below: input.count, every: max(1, input.count / 6), using: &generator)
        let expected = try #require(Gzip.compress(input, pieceEnds: ends))
        #expect(gunzip(expected) == input)
        for _ in 0..<8 {
            let (bytes, _) = try grow(input, ends: ends, using: &generator) { _ in nil }
            #expect(bytes == expected)
        }
    }

    /// A piece deflated by one stream, carried into another that reaches the same input there, leaves the bytes
    /// as though it had been deflated again.
    @Test func carriedPiecesGiveTheBytesOfDeflatingThemAgain() async throws {
        var generator = SystemRandomNumberGenerator()
        let input = feedLikeBytes(rows: 3000)
        let ends = randomPieceEnds(below: input.count, every: 20_000, using: &generator)
        // A stream that deflated every piece, to carry from.
        let source = try #require(GzipStream())
        var start = 0
        for end in ends {
            #expect(input[start..<end].withUnsafeBytes { source.append($0) })
            #expect(source.endPiece())
            start = end
        }
        var pieces: [Int: GzipStream.Piece] = [:]
        for piece in source.pieces where Bool.random(using: &generator) { pieces[piece.input.lowerBound] = piece }
        let (bytes, deflated) = try grow(input, ends: ends, using: &generator) { start in
            pieces[start].map { (source.compressed($0), $0.input.count, $0.crc) }
        }
        #expect(bytes == Gzip.compress(input, pieceEnds: ends))
        #expect(deflated == input.count - 1 - pieces.values.reduce(0) { $0 + $1.input.count })
    }

    /// Takes `input` but its last byte into a new stream in random steps, ending pieces at `ends`, with random
    /// snapshots (each checked against the one-shot bytes) and a piece from `carried` wherever it offers one;
    /// the final snapshot's bytes (finished with the last byte), and how much the stream deflated itself.
    private func grow(
        _ input: [UInt8], ends: [Int], using generator: inout some RandomNumberGenerator,
        carried: (Int) -> (ByteSegments, Int, UInt32)?
    ) throws -> (bytes: [UInt8], deflated: Int) {
        let stream = try #require(GzipStream())
        let last = input.count - 1
        var offset = 0
        var next = 0
        while offset < last {
            if stream.atPieceStart, let (bytes, length, crc) = carried(offset) {
                stream.append(piece: bytes, length: length, crc: crc)
                offset += length
                while next < ends.count, ends[next] <= offset { next += 1 }
                continue
            }
            let limit = next < ends.count ? min(ends[next], last) : last
            let step = min(limit - offset, Int.random(in: 1...9000, using: &generator))
            #expect(input[offset..<(offset + step)].withUnsafeBytes { stream.append($0) })
            offset += step
            if next < ends.count, offset == ends[next] {
                #expect(stream.endPiece())
                next += 1
            }
            if Bool.random(using: &generator) {
                let suffix = Array(input[offset...])
                let suffixEnds = ends[next...].map { $0 - offset }
                let partial = try #require(stream.snapshot(finishingWith: suffix, pieceEnds: suffixEnds))
                #expect(partial.bytes == Gzip.compress(input, pieceEnds: ends))
            }
        }
        let suffixEnds = ends[next...].map { $0 - last }
        let bytes = try #require(stream.snapshot(finishingWith: [input[last]], pieceEnds: suffixEnds)).bytes
        return (bytes, stream.deflated)
    }

    @Test func anEmptyStreamFinishesTheSuffixAlone() async throws {
        let stream = try #require(GzipStream())
        let snapshot = try #require(stream.snapshot(finishingWith: Array("[]".utf8)))
        #expect(gunzip(snapshot.bytes) == Array("[]".utf8))
        #expect(snapshot.bytes == zlibGzip(Array("[]".utf8)))
    }
}

/// The gzip tag: the identity hash, the coding, the level and the rows in a piece, so that a build gzipping
/// otherwise never gives other bytes the same strong tag.
@Suite struct GzipTagTests {
    @Test func theGzipTagIsTheIdentityHashWithCodingLevelAndPieces() async throws {
        let chatt = StoredChatt(name: "a", message: "b", id: "i", timestamp: "t", geodata: nil)
        let feed = try await ChattFeed(repository: InMemoryChattRepository([chatt])).read(.maps)
        let identity = feed.identity.etag.opaque
        #expect(await feed.gzipped().etag.opaque == identity + "-gzip6p1024")
    }
}
