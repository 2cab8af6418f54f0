/// A complete, validated request head: request line, header fields, and the body framing they select.
struct RequestHead {
    /// The request line.
    var line: RequestLine
    /// The header fields in the order received.
    var headers: HTTPHeaders
    /// How the body is delimited.
    var framing: BodyFraming
    /// Expect: 100-continue in HTTP/1.1 with a body to come.
    var expectsContinue: Bool
}

/// Parses a request head line by line as bytes arrive, consuming each line once it is complete and valid.
struct RequestHeadParser {
    private let limits: HTTPLimits
    private var requestLine: RequestLine?
    private var lineScanner = LineScanner()
    private var fieldSection: FieldSectionReader
    private var headers = HTTPHeaders()
    private var framingFields = FramingFields()

    init(limits: HTTPLimits) {
        self.limits = limits
        fieldSection = FieldSectionReader(maxBytes: limits.maxHeaderBytes, maxCount: limits.maxHeaderCount)
    }

    /// Whether the request line has been read (then the request is under way even with nothing buffered).
    var hasRequestLine: Bool { requestLine != nil }

    /// Parses from `bytes[readIndex...]`, advancing `readIndex` past complete lines; the head once it is complete.
    mutating func parse(_ bytes: [UInt8], readIndex: inout Int) throws(HTTPParseError) -> RequestHead? {
        let requestLine: RequestLine
        if let parsed = self.requestLine {
            requestLine = parsed
        } else {
            guard let parsed = try parseRequestLine(bytes, &readIndex) else { return nil }
            self.requestLine = parsed
            requestLine = parsed
        }
        while let line = try fieldSection.nextLine(bytes, at: readIndex, malformed: .invalidHeader) {
            switch line {
            case .field(let length):
                guard let field = FieldLine.parse(bytes, readIndex..<(readIndex + length)) else {
                    throw .invalidHeader
                }
                framingFields.record(bytes, field)
                headers.add(
                    String(decoding: bytes[field.name], as: UTF8.self),
                    String(decoding: bytes[field.value], as: UTF8.self))
                readIndex += length + 2
            case .end:
                readIndex += 2
                let (framing, expectsContinue) = try framingFields.resolve(
                    version: requestLine.version, maxBodyBytes: limits.maxBodyBytes)
                return RequestHead(
                    line: requestLine, headers: headers, framing: framing, expectsContinue: expectsContinue)
            }
        }
        return nil
    }

    private mutating func parseRequestLine(
        _ bytes: [UInt8], _ readIndex: inout Int
    ) throws(HTTPParseError) -> RequestLine? {
        if lineScanner.scanned == 0 {
            // Empty lines before the request line are skipped (RFC 9112 §2.2), so they can't start a request.
            while readIndex + 1 < bytes.count, bytes[readIndex] == ByteClass.cr, bytes[readIndex + 1] == ByteClass.lf {
                readIndex += 2
            }
        }
        switch lineScanner.scan(bytes, from: readIndex, maxLength: limits.maxRequestLineBytes) {
        case .needMore:
            return nil
        case .malformed:
            throw .invalidRequestLine
        case .tooLong:
            throw .requestLineTooLong
        case .line(let length, _):
            let line = try RequestLine.parse(bytes, readIndex..<(readIndex + length))
            readIndex += length + 2
            return line
        }
    }
}
