import ASCII

/// How the body of a request is delimited (RFC 9112 §6.3).
enum BodyFraming: Equatable {
    /// No Content-Length and no Transfer-Encoding: the body is empty.
    case none
    /// Exactly this many bytes.
    case length(Int)
    /// Transfer-Encoding: chunked.
    case chunked
}

/// The lower-case names and values the framing rules look for.
private enum Name {
    static let host = Array("host".utf8)
    static let contentLength = Array("content-length".utf8)
    static let transferEncoding = Array("transfer-encoding".utf8)
    static let expect = Array("expect".utf8)
    static let continue100 = Array("100-continue".utf8)
    static let chunked = Array("chunked".utf8)
}

/// Collects Host, Content-Length, Transfer-Encoding and Expect while the header section is read, and
/// applies RFC 9112's rules to them once the head is complete, so errors come out in a fixed order
/// whatever the order of the fields.
struct FramingFields {
    private enum ContentLength: Equatable {
        case absent, value(Int), invalid
    }

    private var hostCount = 0
    private var hostInvalid = false
    private var contentLength = ContentLength.absent
    private var codings = TransferCodings()
    private var expectsContinue = false
    private var expectsOther = false

    /// Notes `field` if it is one of the fields this type rules on.
    mutating func record(_ bytes: [UInt8], _ field: FieldLine) {
        // Dispatch on the name's length first: most fields are none of these four and cost one comparison.
        switch field.name.count {
        case 4 where ByteClass.equalsIgnoringCase(bytes, field.name, Name.host):
            hostCount += 1
            if !HostSyntax.isValid(bytes, field.value) { hostInvalid = true }
        case 14 where ByteClass.equalsIgnoringCase(bytes, field.name, Name.contentLength):
            recordContentLength(bytes, field.value)
        case 17 where ByteClass.equalsIgnoringCase(bytes, field.name, Name.transferEncoding):
            codings.record(bytes, field.value)
        case 6 where ByteClass.equalsIgnoringCase(bytes, field.name, Name.expect):
            if ByteClass.equalsIgnoringCase(bytes, field.value, Name.continue100) {
                expectsContinue = true
            } else {
                expectsOther = true
            }
        default:
            break
        }
    }

    /// The body framing, and whether the client waits for `100 Continue` before sending a body.
    ///
    /// Order: Host (RFC 9112 §3.2), Content-Length and Transfer-Encoding (§6.1–6.3), body size, Expect.
    func resolve(
        version: HTTPVersion, maxBodyBytes: Int
    ) throws(HTTPParseError) -> (BodyFraming, expectsContinue: Bool) {
        if hostInvalid || hostCount > 1 || (version == .http1_1 && hostCount == 0) { throw .invalidHost }
        let framing = try bodyFraming(version: version)
        if case .length(let length) = framing, length > maxBodyBytes { throw .bodyTooLarge }
        // A server MUST ignore 100-continue in an HTTP/1.0 request (RFC 9110 §10.1.1); we ignore all of Expect.
        guard version == .http1_1 else { return (framing, false) }
        if expectsOther { throw .unsupportedExpectation }
        let hasBody = framing != .none && framing != .length(0)
        return (framing, expectsContinue && hasBody)
    }

    private func bodyFraming(version: HTTPVersion) throws(HTTPParseError) -> BodyFraming {
        if contentLength == .invalid { throw .invalidContentLength }
        guard codings.isPresent else {
            if case .value(let length) = contentLength { return .length(length) }
            return .none
        }
        // Both headers is a request smuggling vector (RFC 9112 §6.1, §11.2): reject, never pick one.
        if contentLength != .absent { throw .conflictingLengthHeaders }
        // HTTP/1.0 has no Transfer-Encoding: its framing is faulty (RFC 9112 §6.1).
        if version == .http1_0 { throw .invalidTransferEncoding }
        return try codings.framing()
    }

    /// Content-Length = 1*DIGIT, possibly repeated as a list or over lines with one same value (RFC 9110 §8.6).
    private mutating func recordContentLength(_ bytes: [UInt8], _ range: Range<Int>) {
        ByteClass.forEachListElement(bytes, range) { element in
            switch (Self.decimal(bytes, element), contentLength) {
            case (let value?, .absent): contentLength = .value(value)
            case (let value?, .value(let previous)) where value == previous: break
            default: contentLength = .invalid
            }
        }
    }

    /// The value of 1*DIGIT, or nil when empty, not all digits, or over `Int.max`.
    private static func decimal(_ bytes: [UInt8], _ range: Range<Int>) -> Int? {
        guard !range.isEmpty else { return nil }
        var value = 0
        for byte in bytes[range] {
            guard ASCII.isDigit(byte) else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }
}

/// The transfer codings of all Transfer-Encoding lines, as one list (RFC 9112 §6.1).
private struct TransferCodings {
    private(set) var isPresent = false
    private var isMalformed = false
    private var count = 0
    private var chunkedCount = 0
    private var lastIsChunked = false

    mutating func record(_ bytes: [UInt8], _ range: Range<Int>) {
        isPresent = true
        ByteClass.forEachListElement(bytes, range) { element in
            if element.isEmpty { isMalformed = true }
            lastIsChunked = ByteClass.equalsIgnoringCase(bytes, element, Name.chunked)
            count += 1
            if lastIsChunked { chunkedCount += 1 }
        }
    }

    /// `.chunked` when chunked is the only coding; otherwise the error RFC 9112 §6.3 and docs/API.md ask for.
    func framing() throws(HTTPParseError) -> BodyFraming {
        if isMalformed { throw .invalidTransferEncoding }
        // chunked must be last (§6.3 item 4: 400), and applied once (§7).
        if !lastIsChunked { throw chunkedCount > 0 ? .invalidTransferEncoding : .unsupportedTransferEncoding }
        if count > 1 { throw chunkedCount > 1 ? .invalidTransferEncoding : .unsupportedTransferEncoding }
        return .chunked
    }
}
