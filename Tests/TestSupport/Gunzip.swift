import CZlib

/// Inflates one gzip member with zlib, independently of the server's encoder; nil if it is not valid gzip.
public func gunzip(_ bytes: [UInt8]) -> [UInt8]? {
    var stream = z_stream()
    guard czlib_inflate_init_gzip(&stream) == Z_OK else { return nil }
    defer { inflateEnd(&stream) }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    var status = Z_OK
    var input = bytes
    input.withUnsafeMutableBufferPointer { inputBuffer in
        stream.next_in = inputBuffer.baseAddress
        stream.avail_in = uInt(inputBuffer.count)
        while status == Z_OK {
            chunk.withUnsafeMutableBufferPointer { out in
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                status = inflate(&stream, Z_NO_FLUSH)
                output.append(contentsOf: out[0..<(out.count - Int(stream.avail_out))])
            }
        }
    }
    return status == Z_STREAM_END && stream.avail_in == 0 ? output : nil
}
