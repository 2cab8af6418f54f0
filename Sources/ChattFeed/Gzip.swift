import ChattModel
import CZlib
import JSON

/// Compresses bytes into one gzip member (RFC 1952) with zlib's deflate.
public enum Gzip {
    /// The level feeds are compressed at: 6, zlib's default. A feed's gzip form grows with its body
    /// (`GzipStream`): each row is compressed once, not the whole feed again after every post, so a level better
    /// than 1 costs little. Level 9 takes several times as long again for a result only slightly smaller
    /// (measured: bench/RESULTS.md, "Gzip level").
    public static let feedLevel: Int32 = 6

    /// `bytes` as a gzip member, or nil if zlib fails (it only can when out of memory).
    public static func compress(_ bytes: [UInt8], level: Int32 = feedLevel) -> [UInt8]? {
        // zlib counts input in 32 bits; a feed never comes near 4 GiB.
        guard bytes.count < Int(UInt32.max) else { return nil }
        var stream = z_stream()
        guard czlib_deflate_init_gzip(&stream, level) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let capacity = Int(deflateBound(&stream, uLong(bytes.count)))
        var output = [UInt8](repeating: 0, count: capacity)
        let status = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                // zlib never writes through next_in; its API just lacks the const.
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                // deflateBound guarantees room for everything, so one call with Z_FINISH completes.
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        output.removeLast(capacity - Int(stream.total_out))
        return output
    }
}
