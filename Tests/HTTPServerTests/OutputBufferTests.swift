import HTTPCore
@testable import HTTPServer
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The output queue: bytes leave in order, small pieces share a write, shared bodies are not copied whole.
@Suite struct OutputBufferTests {
    /// Drains `buffer` through gathered writes that accept at most `limit` bytes each; returns the bytes and each
    /// write's offered size.
    static func drain(_ buffer: inout OutputBuffer, limit: Int = .max) -> (bytes: [UInt8], writes: [Int]) {
        var bytes: [UInt8] = []
        var writes: [Int] = []
        while !buffer.isEmpty {
            let result = buffer.writeGathered { offered in
                let taken = min(offered.count, limit)
                bytes += offered.prefix(taken)
                writes.append(offered.count)
                return .done(taken)
            }
            #expect(result != .done(0))
        }
        return (bytes, writes)
    }

    /// Drains `buffer` through vectored writes that accept at most `limit` bytes each; returns the bytes and the
    /// number of pieces each write was offered.
    static func drainVectored(_ buffer: inout OutputBuffer, limit: Int = .max) -> (bytes: [UInt8], pieces: [Int]) {
        var bytes: [UInt8] = []
        var pieces: [Int] = []
        while !buffer.isEmpty {
            let result = buffer.writeVectored { vectors in
                pieces.append(vectors.count)
                var left = limit
                for vector in vectors where left > 0 {
                    let taken = min(vector.iov_len, left)
                    bytes += UnsafeRawBufferPointer(start: vector.iov_base, count: taken)
                    left -= taken
                }
                return .done(min(limit, vectors.reduce(0) { $0 + $1.iov_len }))
            }
            #expect(result != .done(0))
        }
        return (bytes, pieces)
    }

    @Test func smallPiecesGoOutInOneWrite() {
        var buffer = OutputBuffer()
        let parts: [[UInt8]] = [Array("HTTP/1.1 200 OK\r\n\r\n".utf8), [1, 2, 3], Array(repeating: 7, count: 100)]
        for part in parts { buffer.append(part) }
        buffer.append(shared: Array(repeating: 9, count: 50)[...])
        #expect(buffer.byteCount == parts.map(\.count).reduce(0, +) + 50)
        let (bytes, writes) = Self.drain(&buffer)
        #expect(bytes == parts.flatMap { $0 } + Array(repeating: 9, count: 50))
        #expect(writes == [bytes.count], "staged together: one contiguous write")
        #expect(buffer.byteCount == 0)
    }

    @Test func aHeadAndALargeBodyShareTheFirstWriteOnly() {
        var buffer = OutputBuffer()
        let head = Array("HTTP/1.1 200 OK\r\n\r\n".utf8)
        let body = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
        buffer.append(head)
        buffer.append(shared: body[...])
        let (bytes, writes) = Self.drain(&buffer)
        #expect(bytes == head + body)
        #expect(writes.first == OutputBuffer.gatherBytes, "the head and the start of the body: one record")
        #expect(writes.dropFirst().first == head.count + body.count - OutputBuffer.gatherBytes, "then the rest directly")
    }

    @Test func vectoredWritesOfferEveryPieceWithoutCopying() {
        var buffer = OutputBuffer()
        let head = Array("HTTP/1.1 200 OK\r\n\r\n".utf8)
        let body = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 * 3) }
        for _ in 0..<3 {
            buffer.append(head)
            buffer.append(shared: body[...])
        }
        let (bytes, pieces) = Self.drainVectored(&buffer)
        #expect(bytes == Array([head + body, head + body, head + body].joined()))
        #expect(pieces == [6], "three heads and three bodies in one sendmsg")
    }

    @Test func partialWritesResumeMidPieceInOrder() {
        let pieces = (0..<50).map { index in (0..<(index * 137 % 5000 + 1)).map { UInt8(truncatingIfNeeded: $0 + index) } }
        var buffer = OutputBuffer()
        for (index, piece) in pieces.enumerated() {
            if index % 3 == 0 { buffer.append(shared: piece[...]) } else { buffer.append(piece) }
        }
        buffer.append(shared: pieces[3][10...])
        let expected = pieces.flatMap { $0 } + Array(pieces[3][10...])
        for limit in [1, 7, 100, 4096, 20_000] {
            var gathered = buffer
            #expect(Self.drain(&gathered, limit: limit).bytes == expected, "gathered, limit \(limit)")
            var vectored = buffer
            #expect(Self.drainVectored(&vectored, limit: limit).bytes == expected, "vectored, limit \(limit)")
        }
    }

    @Test func aBodyOfSegmentsIsWrittenFromTheSegmentsThemselves() {
        // A feed version: a large shared segment, small ones settled since, a medium one, the tail and "]".
        let storage = (0..<120_000).map { UInt8(truncatingIfNeeded: $0 * 13) }
        let sizes = [90_000, 300, 700, 20_000, 8_800, 199, 1]
        var segments: [ArraySlice<UInt8>] = []
        for size in sizes { segments.append(storage[segments.reduce(0) { $0 + $1.count }...].prefix(size)) }
        let body = HTTPBody(segments: segments)
        let head = Array("HTTP/1.1 200 OK\r\n\r\n".utf8)
        var buffer = OutputBuffer()
        buffer.append(head)
        buffer.append(shared: body)
        var vectored = buffer
        var offered: [UnsafeRawPointer?] = []
        _ = vectored.writeVectored { vectors in
            offered = vectors.map { UnsafeRawPointer($0.iov_base) }
            return .done(1)
        }
        let large = segments.filter { $0.count > OutputBuffer.copyLimit }
        let addresses = large.map { segment in segment.withUnsafeBytes { $0.baseAddress } }
        // The head | 90 000 | 300 and 700 staged together | 20 000 | 8 800 | 199 and 1 staged together.
        #expect(offered.count == 6, "small segments staged, each large one in place")
        #expect(addresses.allSatisfy { offered.contains($0) }, "large segments are offered where they lie")
        let expected = head + Array(storage.prefix(body.count))
        #expect(Self.drainVectored(&buffer, limit: 5_000).bytes == expected)
        var gathered = OutputBuffer()
        gathered.append(head)
        gathered.append(shared: body)
        let (bytes, writes) = Self.drain(&gathered)
        #expect(bytes == expected)
        #expect(writes.allSatisfy { $0 <= OutputBuffer.gatherBytes || $0 == 90_000 - (OutputBuffer.gatherBytes - head.count) },
                "TLS records of at most 16 KiB, but for the rest of the one segment larger than that")
    }

    @Test func stagedBytesAreWrittenDirectlyIntoTheBuffer() {
        var buffer = OutputBuffer()
        buffer.stage { $0.append(contentsOf: "HTTP/1.1 ".utf8) }
        buffer.stage { _ in }
        buffer.stage { $0.append(contentsOf: "204 No Content\r\n\r\n".utf8) }
        let (bytes, writes) = Self.drain(&buffer)
        #expect(String(decoding: bytes, as: UTF8.self) == "HTTP/1.1 204 No Content\r\n\r\n")
        #expect(writes.count == 1)
    }

    @Test func outputThatNeverQuiteEmptiesKeepsItsStagingBounded() {
        // HTTP/2 under steady load: frames keep coming while earlier ones leave, and one byte always waits.
        var buffer = OutputBuffer()
        var expected: [UInt8] = []
        var written: [UInt8] = []
        for round in 0..<2000 {
            let frame = [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: 300)
            buffer.append(frame)
            expected += frame
            _ = buffer.writeGathered { offered in
                written += offered.dropLast()
                return .done(offered.count - 1)
            }
            #expect(buffer.byteCount == 1)
            #expect(buffer.stagedByteCount <= 2 * OutputBuffer.retainedStagingBytes, "round \(round)")
        }
        written += Self.drain(&buffer).bytes
        #expect(written == expected)
    }

    @Test func emptyPiecesAreNotQueued() {
        var buffer = OutputBuffer()
        buffer.append([])
        buffer.append(shared: [UInt8]()[...])
        #expect(buffer.isEmpty)
        #expect(buffer.writeGathered { _ in .done(99) } == .done(0))
    }
}

extension OutputBuffer {
    /// Everything queued, taken out as written.
    mutating func takeAll() -> [UInt8] {
        var bytes: [UInt8] = []
        while !isEmpty {
            _ = writeGathered { offered in
                bytes += offered
                return .done(offered.count)
            }
        }
        return bytes
    }
}
