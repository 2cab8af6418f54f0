@testable import HTTPServer
import Testing

/// The output queue: bytes leave in order, small chunks share a write, shared bodies are not copied whole.
@Suite struct OutputBufferTests {
    /// Drains `buffer` through writes that accept at most `limit` bytes each; returns the bytes and each write's size.
    static func drain(_ buffer: inout OutputBuffer, limit: Int = .max) -> (bytes: [UInt8], writes: [Int]) {
        var bytes: [UInt8] = []
        var writes: [Int] = []
        while !buffer.isEmpty {
            let result = buffer.writeSome { offered in
                let taken = min(offered.count, limit)
                bytes += offered.prefix(taken)
                writes.append(offered.count)
                return .done(taken)
            }
            #expect(result != .done(0))
        }
        return (bytes, writes)
    }

    @Test func smallChunksGoOutInOneWrite() {
        var buffer = OutputBuffer()
        let parts: [[UInt8]] = [Array("HTTP/1.1 200 OK\r\n\r\n".utf8), [1, 2, 3], Array(repeating: 7, count: 100)]
        for part in parts { buffer.append(part) }
        #expect(buffer.byteCount == parts.map(\.count).reduce(0, +))
        let (bytes, writes) = Self.drain(&buffer)
        #expect(bytes == parts.flatMap { $0 })
        #expect(writes == [bytes.count])
        #expect(buffer.byteCount == 0)
    }

    @Test func aHeadAndALargeBodyShareTheFirstWriteOnly() {
        var buffer = OutputBuffer()
        let head = Array("HTTP/1.1 200 OK\r\n\r\n".utf8)
        let body = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
        buffer.append(head)
        buffer.append(body)
        let (bytes, writes) = Self.drain(&buffer)
        #expect(bytes == head + body)
        #expect(writes.first == OutputBuffer.gatherBytes, "the head and the start of the body: one record")
        #expect(writes.dropFirst().first == head.count + body.count - OutputBuffer.gatherBytes, "then the rest directly")
    }

    @Test func partialWritesResumeMidChunkInOrder() {
        var buffer = OutputBuffer()
        let chunks = (0..<50).map { index in (0..<(index * 37 % 500 + 1)).map { UInt8(truncatingIfNeeded: $0 + index) } }
        for chunk in chunks { buffer.append(chunk) }
        buffer.append(chunks[3][10...])
        let expected = chunks.flatMap { $0 } + Array(chunks[3][10...])
        for limit in [1, 7, 100, 4096] {
            var copy = buffer
            #expect(Self.drain(&copy, limit: limit).bytes == expected, "limit \(limit)")
        }
    }

    @Test func emptyChunksAreNotQueued() {
        var buffer = OutputBuffer()
        buffer.append([])
        buffer.append([UInt8]()[...])
        #expect(buffer.isEmpty)
        #expect(buffer.writeSome { _ in .done(99) } == .done(0))
    }
}
