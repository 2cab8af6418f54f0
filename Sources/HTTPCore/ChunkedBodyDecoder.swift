/// Decodes a chunked body (RFC 9112 §7.1) incrementally, consuming bytes as it goes.
struct ChunkedBodyDecoder {
    /// Longest chunk-size line (size and extensions) we read before giving up.
    static let maxSizeLineBytes = 4096

    private enum State {
        case size
        case data(remaining: Int)
        case dataEnd
        case trailers
    }

    private var state = State.size
    private var sizeLine = LineScanner()
    private var trailers: FieldSectionReader
    private let maxBodyBytes: Int
    /// The decoded bytes so far.
    private(set) var body: [UInt8] = []

    init(limits: HTTPLimits) {
        maxBodyBytes = limits.maxBodyBytes
        trailers = FieldSectionReader(maxBytes: limits.maxHeaderBytes, maxCount: limits.maxHeaderCount)
    }

    /// Decodes from `bytes[readIndex...]`, advancing `readIndex`; true once the last chunk and trailers are read.
    mutating func decode(_ bytes: [UInt8], readIndex: inout Int) throws(HTTPParseError) -> Bool {
        while true {
            switch state {
            case .size:
                guard let size = try readSizeLine(bytes, &readIndex) else { return false }
                // Count the declared size against the limit before any data arrives.
                guard size <= maxBodyBytes - body.count else { throw .bodyTooLarge }
                state = size == 0 ? .trailers : .data(remaining: size)
            case .data(let remaining):
                let take = min(remaining, bytes.count - readIndex)
                guard take > 0 else { return false }
                body.append(contentsOf: bytes[readIndex..<(readIndex + take)])
                readIndex += take
                state = take == remaining ? .dataEnd : .data(remaining: remaining - take)
            case .dataEnd:
                guard readIndex < bytes.count else { return false }
                guard bytes[readIndex] == ByteClass.cr else { throw .invalidChunk }
                guard readIndex + 1 < bytes.count else { return false }
                guard bytes[readIndex + 1] == ByteClass.lf else { throw .invalidChunk }
                readIndex += 2
                state = .size
            case .trailers:
                return try readTrailers(bytes, &readIndex)
            }
        }
    }

    private mutating func readSizeLine(_ bytes: [UInt8], _ readIndex: inout Int) throws(HTTPParseError) -> Int? {
        switch sizeLine.scan(bytes, from: readIndex, maxLength: Self.maxSizeLineBytes) {
        case .needMore:
            return nil
        case .malformed, .tooLong:
            throw .invalidChunk
        case .line(let length, _):
            guard let size = ChunkSizeLine.parse(bytes, readIndex..<(readIndex + length)) else { throw .invalidChunk }
            readIndex += length + 2
            return size
        }
    }

    /// Reads trailer field lines (checked like header lines, then discarded, RFC 9112 §7.1.2) up to the empty line.
    private mutating func readTrailers(_ bytes: [UInt8], _ readIndex: inout Int) throws(HTTPParseError) -> Bool {
        while let line = try trailers.nextLine(bytes, at: readIndex, malformed: .invalidChunk) {
            switch line {
            case .end:
                readIndex += 2
                return true
            case .field(let length):
                guard FieldLine.parse(bytes, readIndex..<(readIndex + length)) != nil else { throw .invalidChunk }
                readIndex += length + 2
            }
        }
        return false
    }
}
