import CZlib
import HTTPCore

/// One gzip member (RFC 1952) compressed as its input grows: each byte is compressed once, and a snapshot is the
/// member of everything so far plus a suffix, finished from a copy of the stream (zlib's `deflateCopy`) while the
/// stream itself goes on.
///
/// The stream is never flushed. zlib's output does not depend on how the input was split across calls when
/// nothing is flushed, so a snapshot is byte for byte `Gzip.compress(input + suffix)` at the same level, whatever
/// the history of appends and snapshots: every process gives the same feed the same gzip bytes, and a gzip entity
/// tag derived from the identity bytes stays a strong validator (RFC 9110 §8.8.3). A `Z_SYNC_FLUSH` per version
/// would have made the bytes depend on when versions happened. (`GzipStreamTests` checks the equality.)
///
/// The stream's output is kept in segments (`ByteSegments`, compacted as they grow) that every snapshot shares:
/// a snapshot is those segments plus its own finish, so the stream and its snapshots hold the compressed feed
/// once.
// @unchecked Sendable: a stream is only used under its owner's lock (FeedLineage's gzip state).
final class GzipStream: @unchecked Sendable {
    private let stream: UnsafeMutablePointer<z_stream>
    /// Input bytes compressed so far.
    private(set) var consumed = 0
    /// The stream's output up to the last snapshot, shared with the snapshots.
    private var output = ByteSegments()
    /// The stream's output since the last snapshot.
    private var fresh: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)

    /// The largest piece handed to zlib at once: it counts input in 32 bits.
    private static let maximumPiece = 1 << 30

    /// A stream at `level`, or nil if zlib cannot start one (out of memory).
    init?(level: Int32 = Gzip.feedLevel) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard czlib_deflate_init_gzip(stream, level) == Z_OK else {
            stream.deallocate()
            return nil
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    /// Compresses `bytes` after those taken before; false if zlib failed (the stream is then unusable).
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let piece = UnsafeRawBufferPointer(rebasing: bytes[offset..<min(bytes.count, offset + Self.maximumPiece)])
            guard run(stream, piece, flush: Z_NO_FLUSH, into: &fresh) == Z_OK else { return false }
            offset += piece.count
        }
        consumed += bytes.count
        return true
    }

    /// The gzip member of everything appended, then `suffix`; nil if zlib failed. The stream goes on without it.
    func snapshot(finishingWith suffix: [UInt8]) -> HTTPBody? {
        let copy = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        defer { copy.deallocate() }
        guard deflateCopy(copy, stream) == Z_OK else { return nil }
        defer { deflateEnd(copy) }
        var finish: [UInt8] = []
        let status = suffix.withUnsafeBytes { run(copy, $0, flush: Z_FINISH, into: &finish) }
        guard status == Z_STREAM_END else { return nil }
        output.append(compacting: fresh)
        fresh = []
        var body = output
        body.append(finish[...])
        return body
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
            // A full buffer may leave output waiting; Z_FINISH goes on until the member's trailer is out.
        } while status == Z_OK && (flush == Z_FINISH || target.pointee.avail_out == 0)
        // After a buffer filled exactly, zlib reports "no progress possible" once everything is taken.
        if flush != Z_FINISH, status == Z_BUF_ERROR, target.pointee.avail_in == 0 { status = Z_OK }
        target.pointee.next_in = nil
        return status
    }
}
