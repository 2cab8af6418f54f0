import ASCII

/// The head of one HTTP/2 request (RFC 9113 §8.3), built from the fields the framing layer decodes, and turned
/// into an `HTTPRequest` with the same rules and limits as HTTP/1.1: unknown method 501, bad `:path` 400, too
/// long a target 414, too many or too large fields 431, a declared body over the limit 413, an `Expect` other
/// than `100-continue` 417.
///
/// The framing layer (nghttp2) has already checked what RFC 9113 §8.2–8.3 make a stream error: pseudo-header
/// presence, order and duplicates, lower-case names, connection-specific fields, and `content-length` against
/// the DATA received.
public struct HTTP2RequestHead: Sendable {
    private let limits: HTTPLimits
    private var method: [UInt8] = []
    private var path: [UInt8] = []
    private var authority: [UInt8]?
    private var headers = HTTPHeaders()
    private var hasHost = false
    private var contentLength: Int?
    private var expectsOther = false
    /// Bytes of the fields so far, counted as HTTP/1.1 would (`name: value` and CRLF), for the same limit.
    private var headerBytes = 0
    private var overLimit = false

    public init(limits: HTTPLimits) {
        self.limits = limits
    }

    /// The body length the request declares with `content-length`, if any.
    public var declaredContentLength: Int? { contentLength }

    /// Whether `:method` is HEAD: then even an error answer carries no body (RFC 9110 §9.3.2).
    public var isHead: Bool { method.elementsEqual("HEAD".utf8) }

    /// Adds one decoded field. Past the header limits, fields are dropped (and the request answered 431), so a
    /// header block that decodes to far more than it weighs on the wire (an HPACK bomb) costs no memory.
    public mutating func add(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        guard !overLimit else { return }
        if name.first == UInt8(ascii: ":") {
            addPseudoHeader(name, value)
            return
        }
        headerBytes += name.count + value.count + 4
        guard headerBytes <= limits.maxHeaderBytes, headers.count < limits.maxHeaderCount else {
            overLimit = true
            return
        }
        let nameText = String(decoding: name, as: UTF8.self)
        let valueText = String(decoding: value, as: UTF8.self)
        switch nameText {
        case "host": hasHost = true
        case "content-length": contentLength = Int(valueText)  // its syntax was checked by the framing layer
        case "expect": if valueText.lowercased() != "100-continue" { expectsOther = true }
        default: break
        }
        headers.add(nameText, valueText)
    }

    private mutating func addPseudoHeader(_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        switch String(decoding: name, as: UTF8.self) {
        case ":method": method = Array(value)
        case ":path": path = Array(value)
        case ":authority": authority = Array(value)
        default: break  // :scheme was checked by the framing layer; we serve whichever it is
        }
        // The target has its own limit, as the HTTP/1.1 request line has.
        if name.count + value.count > limits.maxRequestLineBytes + 8 { overLimit = true }
    }

    /// The request with `body`, or the error whose response answers the stream.
    public func request(body: [UInt8]) throws(HTTPParseError) -> HTTPRequest {
        if path.count > limits.maxRequestLineBytes { throw .requestLineTooLong }
        if overLimit { throw .headerTooLarge }
        guard let method = HTTPMethod(rawValue: String(decoding: method, as: UTF8.self)) else {
            throw .unknownMethod
        }
        // origin-form, or `*` for OPTIONS (RFC 9113 §8.3.1); absolute-form has no place in :path.
        guard path.first == UInt8(ascii: "/") || path == [UInt8(ascii: "*")],
            let target = RequestTarget.parse(path, path.indices, method: method)
        else { throw .invalidTarget }
        if let authority, !HostSyntax.isValid(authority, authority.indices) { throw .invalidHost }
        if let contentLength, contentLength > limits.maxBodyBytes { throw .bodyTooLarge }
        if expectsOther { throw .unsupportedExpectation }
        var headers = headers
        // Handlers see the authority where HTTP/1.1 puts it (RFC 9113 §8.3.1).
        if let authority, !hasHost { headers.add("host", String(decoding: authority, as: UTF8.self)) }
        return HTTPRequest(
            method: method, target: target.target, path: target.path, query: target.query, version: .http2,
            headers: headers, body: body)
    }
}
