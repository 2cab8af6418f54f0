import HTTPCore

#if canImport(Glibc)
import Glibc
#endif

/// Bytes waiting to be written, in order. Small pieces (response heads, HTTP/2 frames, small bodies) are copied
/// into one staging buffer that is reused from response to response, so writing them allocates nothing; large
/// bodies are referenced, so a cached feed costs no copy per connection or per HTTP/2 stream.
struct OutputBuffer {
    /// A shared piece this small is copied into staging rather than referenced: it then leaves in the same
    /// contiguous write as the head before it.
    static let copyLimit = 2048
    /// TLS gathers up to this much into one write: one record (16 KiB is TLS's largest) and one system call.
    static let gatherBytes = 16 * 1024
    /// Plain TCP writes at most this many pieces in one `sendmsg`.
    static let maxVectors = 64
    /// Staging kept between responses; a larger buffer is given back once everything is written.
    static let retainedStagingBytes = 64 * 1024

    private enum Piece {
        /// Bytes in `staging`.
        case staged(Range<Int>)
        case shared(ArraySlice<UInt8>)

        var count: Int {
            switch self {
            case .staged(let range): range.count
            case .shared(let slice): slice.count
            }
        }
    }

    private var staging: [UInt8] = []
    private var pieces: [Piece] = []
    /// Pieces before this index are written; they are dropped in batches, not one by one.
    private var head = 0
    /// Bytes queued and not yet written.
    private(set) var byteCount = 0
    /// Where TLS gathers small pieces.
    private var scratch: [UInt8] = []
    private var vectors: [iovec] = []

    var isEmpty: Bool { byteCount == 0 }

    /// The size of the staging buffer, written bytes included until it is reset or compacted.
    var stagedByteCount: Int { staging.count }

    /// Copies `bytes` in.
    mutating func append(_ bytes: some Sequence<UInt8>) {
        stage { $0.append(contentsOf: bytes) }
    }

    /// Queues a shared piece: referenced when large, copied when small.
    mutating func append(shared bytes: ArraySlice<UInt8>) {
        guard !bytes.isEmpty else { return }
        guard bytes.count > Self.copyLimit else { return append(bytes) }
        pieces.append(.shared(bytes))
        byteCount += bytes.count
    }

    /// Queues each segment of `body` as a shared piece: plain TCP then writes them with one `sendmsg`, and TLS
    /// gathers the small ones into records.
    mutating func append(shared body: HTTPBody) {
        for segment in body.segments { append(shared: segment) }
    }

    /// Lets `write` append bytes to the staging buffer directly (a serializer writing a head).
    mutating func stage(_ write: (inout [UInt8]) -> Void) {
        let start = staging.count
        write(&staging)
        let end = staging.count
        guard end > start else { return }
        byteCount += end - start
        // Consecutive staged bytes are one piece, so they leave in one write.
        if pieces.count > head, case .staged(let last) = pieces[pieces.count - 1], last.upperBound == start {
            pieces[pieces.count - 1] = .staged(last.lowerBound..<end)
        } else {
            pieces.append(.staged(start..<end))
        }
    }

    /// Calls `write` with the next bytes to write as one buffer: the first piece when it is large or alone, else
    /// small pieces gathered up to `gatherBytes`; then drops what it reports written.
    mutating func writeGathered(_ write: (UnsafeRawBufferPointer) -> IOResult) -> IOResult {
        guard head < pieces.count else { return .done(0) }
        let first = pieces[head]
        let result: IOResult
        if first.count >= Self.gatherBytes || head + 1 == pieces.count {
            switch first {
            case .staged(let range): result = staging[range].withUnsafeBytes { write($0) }
            case .shared(let slice): result = slice.withUnsafeBytes { write($0) }
            }
        } else {
            gather()
            result = scratch.withUnsafeBytes { write($0) }
        }
        if case .done(let count) = result { consume(count) }
        return result
    }

    /// Calls `write` with up to `maxVectors` pieces as an `iovec` array (for `sendmsg`); then drops what it
    /// reports written.
    mutating func writeVectored(_ write: (UnsafeBufferPointer<iovec>) -> IOResult) -> IOResult {
        guard head < pieces.count else { return .done(0) }
        let result = withVectors(write)
        if case .done(let count) = result { consume(count) }
        return result
    }

    mutating func removeAll() {
        pieces.removeAll()
        staging = []
        head = 0
        byteCount = 0
    }

    private mutating func withVectors(_ write: (UnsafeBufferPointer<iovec>) -> IOResult) -> IOResult {
        vectors.removeAll(keepingCapacity: true)
        let end = min(pieces.count, head + Self.maxVectors)
        // The pointers stay valid while `staging` and the pieces are not touched, that is, during `write`.
        return staging.withUnsafeMutableBytes { staged in
            for index in head..<end {
                switch pieces[index] {
                case .staged(let range):
                    vectors.append(iovec(iov_base: staged.baseAddress! + range.lowerBound, iov_len: range.count))
                case .shared(let slice):
                    let base = slice.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress!) }
                    vectors.append(iovec(iov_base: base, iov_len: slice.count))
                }
            }
            return vectors.withUnsafeBufferPointer { write($0) }
        }
    }

    /// Copies pieces from `head` into `scratch`, up to `gatherBytes` (the last one cut if it does not fit).
    private mutating func gather() {
        scratch.removeAll(keepingCapacity: true)
        var index = head
        while index < pieces.count, scratch.count < Self.gatherBytes {
            let room = Self.gatherBytes - scratch.count
            switch pieces[index] {
            case .staged(let range): scratch.append(contentsOf: staging[range].prefix(room))
            case .shared(let slice): scratch.append(contentsOf: slice.prefix(room))
            }
            index += 1
        }
    }

    /// Drops `count` written bytes from the front.
    private mutating func consume(_ count: Int) {
        byteCount -= count
        var left = count
        while left > 0 {
            let piece = pieces[head]
            guard left < piece.count else {
                left -= piece.count
                head += 1
                continue
            }
            switch piece {
            case .staged(let range): pieces[head] = .staged(range.dropFirst(left))
            case .shared(let slice): pieces[head] = .shared(slice.dropFirst(left))
            }
            left = 0
        }
        if head == pieces.count {
            reset()
        } else if head >= 64 && head * 2 >= pieces.count || staging.count > Self.retainedStagingBytes {
            compact()
        }
    }

    /// Everything is written: staging is reused from its start (or given back when it grew large).
    private mutating func reset() {
        pieces.removeAll(keepingCapacity: true)
        head = 0
        if staging.capacity > Self.retainedStagingBytes {
            staging = []
        } else {
            staging.removeAll(keepingCapacity: true)
        }
    }

    /// Drops written pieces, and the staged bytes before the first unwritten one once they are at least half of
    /// staging, so that a connection whose output never quite empties (HTTP/2 under steady load) does not grow its
    /// buffers without end, and each byte is moved at most once on average.
    private mutating func compact() {
        pieces.removeSubrange(..<head)
        head = 0
        let firstStaged = pieces.lazy.compactMap { piece -> Int? in
            if case .staged(let range) = piece { return range.lowerBound }
            return nil
        }.first ?? staging.count
        guard firstStaged > 0, firstStaged * 2 >= staging.count else { return }
        staging.removeSubrange(..<firstStaged)
        for index in pieces.indices {
            if case .staged(let range) = pieces[index] {
                pieces[index] = .staged((range.lowerBound - firstStaged)..<(range.upperBound - firstStaged))
            }
        }
    }
}
