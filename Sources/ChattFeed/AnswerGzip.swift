import CLibDeflate
import HTTPCore
import Locking

/// Gzip for an answer made for one request (a viewport's rows), which costs that request its time: libdeflate's
/// one-shot gzip at `Gzip.answerLevel`, about twice as fast as zlib's at the same level and a little smaller
/// (bench/RESULTS.md, "Viewports"). A feed's own gzip form grows piece by piece (`GzipStream`), which takes zlib's
/// streaming interface; this needs none.
enum AnswerGzip {
    /// Names how the gzip bytes are made, in their entity tag: libdeflate at the level.
    static let variant = "ld\(Gzip.answerLevel)"

    /// Compressors made once and reused: each holds its tables (about 1 MiB at low levels), too costly to make per
    /// request. One per concurrent caller at most; a caller finding none free makes one.
    private static let idle = Locked<[Compressor]>([])

    /// `body` as one gzip member (RFC 1952); nil if libdeflate cannot allocate a compressor.
    static func compress(_ body: HTTPBody) -> [UInt8]? {
        guard let compressor = idle.withLock({ $0.popLast() }) ?? Compressor(level: Gzip.answerLevel) else {
            return nil
        }
        defer { idle.withLock { if $0.count < 8 { $0.append(compressor) } } }
        return body.withContiguousStorageIfAvailable { compressor.gzip(UnsafeRawBufferPointer($0)) }
            ?? body.bytes.withUnsafeBytes { compressor.gzip($0) }
    }

    /// One libdeflate compressor, used by one caller at a time.
    private final class Compressor: @unchecked Sendable {
        private let handle: OpaquePointer

        init?(level: Int32) {
            guard let handle = libdeflate_alloc_compressor(level) else { return nil }
            self.handle = handle
        }

        deinit {
            libdeflate_free_compressor(handle)
        }

        func gzip(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
            let bound = libdeflate_gzip_compress_bound(handle, bytes.count)
            // Not zeroed first: libdeflate writes every byte it reports.
            let output = [UInt8](unsafeUninitializedCapacity: bound) { output, initialized in
                initialized = libdeflate_gzip_compress(
                    handle, bytes.baseAddress, bytes.count, output.baseAddress, output.count)
            }
            // The bound is about the input's size, several times the output's, and the answer may be kept a while
            // (`WholeMapClusters`).
            return output.isEmpty ? nil : output.inStorageOfItsOwnSize
        }
    }
}
