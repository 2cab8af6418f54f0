import ASCII

/// A parsed request line: `method SP request-target SP HTTP-version` (RFC 9112 §3).
struct RequestLine {
    /// The method, one of those we know.
    var method: HTTPMethod
    /// The validated target with its path and query.
    var target: RequestTarget
    /// HTTP/1.0 or HTTP/1.1.
    var version: HTTPVersion

    /// Parses the line content `bytes[range]` (without CRLF).
    ///
    /// Checks run in this order: shape and token syntax (400), version (505), method (501), target (400).
    static func parse(_ bytes: [UInt8], _ range: Range<Int>) throws(HTTPParseError) -> RequestLine {
        // Exactly one SP between the parts: an empty part means two SPs in a row.
        guard let firstSpace = bytes[range].firstIndex(of: ByteClass.sp),
            let secondSpace = bytes[(firstSpace + 1)..<range.upperBound].firstIndex(of: ByteClass.sp),
            firstSpace > range.lowerBound, secondSpace > firstSpace + 1
        else { throw .invalidRequestLine }
        let methodRange = range.lowerBound..<firstSpace
        guard bytes[methodRange].allSatisfy(ByteClass.isTokenChar) else { throw .invalidRequestLine }
        let version = try parseVersion(bytes, (secondSpace + 1)..<range.upperBound)
        guard let method = knownMethod(bytes, methodRange) else { throw .unknownMethod }
        guard let target = RequestTarget.parse(bytes, (firstSpace + 1)..<secondSpace, method: method) else {
            throw .invalidTarget
        }
        return RequestLine(method: method, target: target, version: version)
    }

    /// HTTP-version = "HTTP/" DIGIT "." DIGIT (RFC 9112 §2.3); only 1.0 and 1.1 are served.
    private static func parseVersion(_ bytes: [UInt8], _ range: Range<Int>) throws(HTTPParseError) -> HTTPVersion {
        let start = range.lowerBound
        // The name is case-sensitive (RFC 9112 §2.3): `http/1.1` is malformed, not a version.
        guard range.count == 8, bytes[start] == UInt8(ascii: "H"), bytes[start + 1] == UInt8(ascii: "T"),
            bytes[start + 2] == UInt8(ascii: "T"), bytes[start + 3] == UInt8(ascii: "P"),
            bytes[start + 4] == UInt8(ascii: "/"),
            ASCII.isDigit(bytes[start + 5]), bytes[start + 6] == UInt8(ascii: "."),
            ASCII.isDigit(bytes[start + 7])
        else { throw .invalidRequestLine }
        switch (bytes[start + 5], bytes[start + 7]) {
        case (UInt8(ascii: "1"), UInt8(ascii: "1")): return .http1_1
        case (UInt8(ascii: "1"), UInt8(ascii: "0")): return .http1_0
        default: throw .unsupportedVersion
        }
    }

    private static let longestMethod = HTTPMethod.allCases.map(\.rawValue.utf8.count).max() ?? 0

    /// The method named by a token; methods are case-sensitive (RFC 9110 §9.1).
    private static func knownMethod(_ bytes: [UInt8], _ range: Range<Int>) -> HTTPMethod? {
        // A longer token is no method; up to 15 bytes a String is stored inline, so common methods do not allocate.
        guard range.count <= longestMethod else { return nil }
        return HTTPMethod(rawValue: String(decoding: bytes[range], as: UTF8.self))
    }
}
