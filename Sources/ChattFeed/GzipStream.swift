import CZlib
import HTTPCore

/// One gzip member (RFC 1952) compressed as its input grows, in pieces: each piece is deflated on its own (a fresh
/// raw deflate stream, ended by a sync flush), so its compressed bytes begin and end on a byte boundary, refer to
/// nothing before it, and stand for the same input wherever it recurs. A removal from a feed then recompresses only
/// the piece the row was in; the other pieces' bytes are carried over (`append(piece:)`). The caller says where
/// pieces end (`GzipPieces`).
///
/// Within a piece the stream is never flushed. zlib's output does not depend on how the input was split across
/// calls when nothing is flushed, so a snapshot is a function of the input and where its pieces end, whatever the
/// history of appends, carried pieces and snapshots: every process gives the same feed the same gzip bytes, and a
/// gzip entity tag derived from the identity bytes stays a strong validator (RFC 9110 §8.8.3). (`GzipStreamTests`
/// checks it.)
///
/// The output is kept in segments (`ByteSegments`, compacted as they grow) that every snapshot shares: a snapshot
/// is the header and the pieces so far plus its own finish and trailer, so the stream and its snapshots hold the
/// compressed feed once.
// @unchecked Sendable: a stream is only used under its owner's lock (`LineageGzip`).
final class GzipStream: @unchecked Sendable {
    /// A finished piece: where its input was, its deflated bytes' place in the output, and the CRC-32 of its input.
    struct Piece: Sendable {
        let input: Range<Int>
        let output: Range<Int>
        let crc: UInt32
    }

    private let stream: UnsafeMutablePointer<z_stream>
    /// Input bytes taken so far, and those of them deflated here (not carried).
    private(set) var consumed = 0
    private(set) var deflated = 0
    /// The pieces finished so far, in order.
    private(set) var pieces: [Piece] = []
    /// Where the open piece's input and output start.
    private var pieceStart = 0
    private var pieceOutput = GzipStream.headerLength
    /// The CRC-32 of the open piece's input, and of all the input.
    private var pieceCRC: UInt32 = 0
    private var crc: UInt32 = 0
    /// The stream's output up to the last snapshot, shared with the snapshots: the header, then pieces.
    private var output: ByteSegments
    /// The stream's output since the last snapshot.
    private var fresh: [UInt8] = []
    /// The output's segments up to the last carried piece's, which compaction leaves alone.
    private var carriedSegments = 0
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)

    /// The largest piece of input handed to zlib at once: it counts input in 32 bits.
    private static let maximumInput = 1 << 30

    /// A stream at `level`, or nil if zlib cannot start one (out of memory).
    init?(level: Int32 = Gzip.feedLevel) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard czlib_deflate_init_raw(stream, level) == Z_OK else {
            stream.deallocate()
            return nil
        }
        output = ByteSegments(Gzip.header(level: level))
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    /// Whether the open piece has no input yet.
    var atPieceStart: Bool { pieceStart == consumed }

    /// Compresses `bytes` after those taken before, in the open piece; false if zlib failed (the stream is then
    /// unusable).
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let part = UnsafeRawBufferPointer(rebasing: bytes[offset..<min(bytes.count, offset + Self.maximumInput)])
            guard run(stream, part, flush: Z_NO_FLUSH, into: &fresh) == Z_OK else { return false }
            offset += part.count
        }
        deflated += bytes.count
        pieceCRC = Self.crc32(pieceCRC, bytes)
        crc = Self.crc32(crc, bytes)
        consumed += bytes.count
        return true
    }

    /// Ends the open piece (which has input): a sync flush, and a fresh stream for the next; false if zlib failed.
    func endPiece() -> Bool {
        guard run(stream, UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_SYNC_FLUSH, into: &fresh) == Z_OK,
            deflateReset(stream) == Z_OK
        else { return false }
        let end = output.count + fresh.count
        pieces.append(Piece(input: pieceStart..<consumed, output: pieceOutput..<end, crc: pieceCRC))
        pieceStart = consumed
        pieceOutput = end
        pieceCRC = 0
        return true
    }

    /// Takes in a whole piece deflated elsewhere (`compressed(_:)` of another stream, for `length` input bytes
    /// with CRC-32 `crc`) while no piece is open, as though its input had been compressed here.
    func append(piece compressed: ByteSegments, length: Int, crc carriedCRC: UInt32) {
        precondition(atPieceStart, "a carried piece starts where a piece ends")
        // Its bytes are shared, not copied: they follow what is settled, and later output is never merged into
        // them (merges cascading into carried pieces copied megabytes a removal).
        settle()
        for segment in compressed.segments { output.append(segment) }
        carriedSegments = output.segments.count
        let end = pieceOutput + compressed.count
        pieces.append(Piece(input: consumed..<(consumed + length), output: pieceOutput..<end, crc: carriedCRC))
        crc = Self.combine(crc, carriedCRC, length: length)
        consumed += length
        pieceStart = consumed
        pieceOutput = end
    }

    /// The deflated bytes of `piece`, one of `pieces`: slices of the output, shared.
    func compressed(_ piece: Piece) -> ByteSegments {
        settle()
        var bytes = ByteSegments()
        output.forEachSlice(in: piece.output) { bytes.append($0) }
        return bytes
    }

    /// The gzip member of everything taken in, then `suffix`, whose own pieces end at `pieceEnds` (offsets in it,
    /// ascending, each short of its end); nil if zlib failed. The stream goes on without it.
    func snapshot(finishingWith suffix: [UInt8], pieceEnds: [Int] = []) -> HTTPBody? {
        let copy = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        defer { copy.deallocate() }
        guard deflateCopy(copy, stream) == Z_OK else { return nil }
        defer { deflateEnd(copy) }
        var finish: [UInt8] = []
        let finished = suffix.withUnsafeBytes { suffix -> Bool in
            var start = 0
            for end in pieceEnds {
                let part = UnsafeRawBufferPointer(rebasing: suffix[start..<end])
                guard run(copy, part, flush: Z_SYNC_FLUSH, into: &finish) == Z_OK, deflateReset(copy) == Z_OK else {
                    return false
                }
                start = end
            }
            return run(copy, UnsafeRawBufferPointer(rebasing: suffix[start...]), flush: Z_FINISH, into: &finish)
                == Z_STREAM_END
        }
        guard finished else { return nil }
        let total = suffix.withUnsafeBytes { Self.crc32(crc, $0) }
        Gzip.appendLittleEndian(total, to: &finish)
        // ISIZE is the input's length modulo 2^32.
        Gzip.appendLittleEndian(UInt32(truncatingIfNeeded: consumed + suffix.count), to: &finish)
        settle()
        var body = output
        body.append(finish[...])
        return body
    }

    /// Moves the output since the last snapshot into the shared segments.
    private func settle() {
        output.append(compacting: fresh, keeping: carriedSegments)
        fresh = []
    }

    /// Feeds `input` to `target` with `flush`, appending whatever it writes to `output`; zlib's last status.
    private func run(
        _ target: UnsafeMutablePointer<z_stream>, _ input: UnsafeRawBufferPointer, flush: Int32, into output: inout [UInt8]
    ) -> Int32 {
        // zlib never writes through next_in; its API just lacks the const.
        target.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
        target.pointee.avail_in = uInt(input.count)
        var status = Z_OK
        repeat {
            let written = scratch.withUnsafeMutableBufferPointer { buffer -> Int in
                target.pointee.next_out = buffer.baseAddress
                target.pointee.avail_out = uInt(buffer.count)
                status = deflate(target, flush)
                return buffer.count - Int(target.pointee.avail_out)
            }
            output.append(contentsOf: scratch[0..<written])
            // A full buffer may leave output waiting; Z_FINISH goes on until the stream's last block is out.
        } while status == Z_OK && (flush == Z_FINISH || target.pointee.avail_out == 0)
        // After a buffer filled exactly, zlib reports "no progress possible" once everything is taken.
        if flush != Z_FINISH, status == Z_BUF_ERROR, target.pointee.avail_in == 0 { status = Z_OK }
        target.pointee.next_in = nil
        return status
    }

    // MARK: - CRC-32 (RFC 1952 §8)

    private static let headerLength = Gzip.header(level: Gzip.feedLevel).count

    private static func crc32(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = uLong(crc)
        var offset = 0
        while offset < bytes.count {
            let count = min(bytes.count - offset, maximumInput)
            crc = CZlib.crc32(crc, bytes.baseAddress!.advanced(by: offset).assumingMemoryBound(to: Bytef.self), uInt(count))
            offset += count
        }
        return UInt32(crc)
    }

    private static func combine(_ first: UInt32, _ second: UInt32, length: Int) -> UInt32 {
        UInt32(crc32_combine(uLong(first), uLong(second), .init(length)))
    }
}
