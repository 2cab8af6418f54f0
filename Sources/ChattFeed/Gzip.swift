import ChattModel
import CZlib
import JSON

/// A feed's gzip form (RFC 1952): one member, its deflate data in pieces (`GzipPieces`), each deflated alone.
public enum Gzip {
    /// The level feeds are compressed at: 6, zlib's default. A feed's gzip form grows with its body
    /// (`GzipStream`): each row is compressed once, not the whole feed again after every post, so a level better
    /// than 1 costs little. Level 9 takes several times as long again for a result only slightly smaller
    /// (measured: bench/RESULTS.md, "Gzip level").
    public static let feedLevel: Int32 = 6

    /// The level an answer made for one request is compressed at (`AnswerGzip`): each costs its request the time,
    /// so speed counts more than size.
    public static let answerLevel: Int32 = 1

    /// What names how a feed's gzip bytes are made from its identity bytes, in its gzip entity tag: the level and
    /// the rows in a piece.
    static let feedVariant = "\(feedLevel)p\(GzipPieces.averageRows)"

    /// `bytes` as one gzip member whose pieces end at `pieceEnds` (ascending offsets, each short of the end), each
    /// piece deflated alone in one call: the bytes a `GzipStream` gives for the same input and pieces however it
    /// grew, and with no pieces, zlib's own gzip. Nil if zlib fails (it only can when out of memory).
    public static func compress(_ bytes: [UInt8], pieceEnds: [Int] = [], level: Int32 = feedLevel) -> [UInt8]? {
        // zlib counts input in 32 bits; a feed never comes near 4 GiB.
        guard bytes.count < Int(UInt32.max) else { return nil }
        var output = header(level: level)
        let bounds = zip([0] + pieceEnds, pieceEnds + [bytes.count])
        for (start, end) in bounds {
            guard let piece = deflatePiece(bytes[start..<end], finishing: end == bytes.count, level: level) else {
                return nil
            }
            output += piece
        }
        let crc = bytes.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
        appendLittleEndian(crc, to: &output)
        appendLittleEndian(UInt32(bytes.count), to: &output)
        return output
    }

    /// One piece as raw deflate data, ended by a sync flush, or by the final block when `finishing`.
    private static func deflatePiece(_ piece: ArraySlice<UInt8>, finishing: Bool, level: Int32) -> [UInt8]? {
        var stream = z_stream()
        guard czlib_deflate_init_raw(&stream, level) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        // deflateBound covers a finished stream; a sync flush's empty stored block needs 5 bytes more at most.
        let capacity = Int(deflateBound(&stream, uLong(piece.count))) + 16
        var output = [UInt8](repeating: 0, count: capacity)
        let status = piece.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                // zlib never writes through next_in; its API just lacks the const.
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return deflate(&stream, finishing ? Z_FINISH : Z_SYNC_FLUSH)
            }
        }
        guard status == (finishing ? Z_STREAM_END : Z_OK), stream.avail_out > 0 else { return nil }
        output.removeLast(capacity - Int(stream.total_out))
        return output
    }

    /// RFC 1952's header as zlib writes it: no name, no time, XFL from the level, OS 3 (Unix).
    static func header(level: Int32) -> [UInt8] {
        let extraFlags: UInt8 = level == 9 ? 2 : (level < 2 ? 4 : 0)
        return [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, extraFlags, 3]
    }

    static func appendLittleEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }
}
