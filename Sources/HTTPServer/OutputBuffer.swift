/// Bytes waiting to be written, as a queue of chunks. Chunks are slices of shared arrays, so a cached response
/// body costs no copy per connection or per HTTP/2 stream.
struct OutputBuffer {
    /// Up to this many bytes of small chunks are gathered into one write: one system call, and over TLS one
    /// record (16 KiB is TLS's largest), instead of one per chunk.
    static let gatherBytes = 16 * 1024

    private var chunks: [ArraySlice<UInt8>] = []
    /// Chunks before this index are written; they are dropped in batches, not one by one.
    private var head = 0
    /// Bytes queued and not yet written.
    private(set) var byteCount = 0
    private var scratch: [UInt8] = []

    var isEmpty: Bool { byteCount == 0 }

    mutating func append(_ chunk: [UInt8]) {
        append(chunk[...])
    }

    mutating func append(_ chunk: ArraySlice<UInt8>) {
        guard !chunk.isEmpty else { return }
        chunks.append(chunk)
        byteCount += chunk.count
    }

    /// Makes one `write` call with the first chunk, or with several small chunks gathered into one buffer, and
    /// drops what it reports written.
    mutating func writeSome(_ write: (UnsafeRawBufferPointer) -> IOResult) -> IOResult {
        guard head < chunks.count else { return .done(0) }
        let first = chunks[head]
        let result: IOResult
        if first.count >= Self.gatherBytes || head + 1 == chunks.count {
            result = first.withUnsafeBytes { write($0) }
        } else {
            gather()
            result = scratch.withUnsafeBytes { write($0) }
        }
        if case .done(let count) = result { consume(count) }
        return result
    }

    mutating func removeAll() {
        chunks.removeAll()
        head = 0
        byteCount = 0
    }

    /// Copies chunks from `head` into `scratch`, up to `gatherBytes` (the last one cut if it does not fit).
    private mutating func gather() {
        scratch.removeAll(keepingCapacity: true)
        var index = head
        while index < chunks.count, scratch.count < Self.gatherBytes {
            let chunk = chunks[index]
            let room = Self.gatherBytes - scratch.count
            scratch.append(contentsOf: chunk.prefix(room))
            index += 1
        }
    }

    /// Drops `count` written bytes from the front.
    private mutating func consume(_ count: Int) {
        byteCount -= count
        var left = count
        while left > 0 {
            let chunk = chunks[head]
            if left >= chunk.count {
                left -= chunk.count
                head += 1
            } else {
                chunks[head] = chunk.dropFirst(left)
                left = 0
            }
        }
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= chunks.count {
            chunks.removeSubrange(..<head)
            head = 0
        }
    }
}
