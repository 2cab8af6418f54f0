/// Bytes waiting to be written, as a queue of chunks. Chunks are shared arrays, so a cached
/// response body costs no copy per connection.
struct OutputBuffer {
    private var chunks: [[UInt8]] = []
    private var offset = 0

    var isEmpty: Bool { chunks.isEmpty }

    mutating func append(_ chunk: [UInt8]) {
        if !chunk.isEmpty { chunks.append(chunk) }
    }

    /// Calls `write` with the unwritten part of the first chunk; it returns how many bytes went out.
    mutating func writeFirst(_ write: (UnsafeRawBufferPointer) -> IOResult) -> IOResult {
        guard let first = chunks.first else { return .done(0) }
        let result = first.withUnsafeBytes { write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
        if case .done(let count) = result {
            offset += count
            if offset == first.count {
                chunks.removeFirst()
                offset = 0
            }
        }
        return result
    }

    mutating func removeAll() {
        chunks.removeAll()
        offset = 0
    }
}
