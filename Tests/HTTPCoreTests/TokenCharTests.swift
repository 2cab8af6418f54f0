import HTTPCore
import Testing

/// Every byte value in methods, field names, field values and targets.
@Suite struct TokenCharTests {
    // RFC 9110 §5.6.2:
    //   token = 1*tchar
    //   tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
    //           "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
    //           ; any VCHAR, except delimiters
    private static func isTchar(_ byte: UInt8) -> Bool {
        let scalar = Unicode.Scalar(byte)
        return byte < 0x80
            && ("!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar) || ("0"..."9").contains(scalar)
                || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar))
    }

    private static func firstOutcome(_ bytes: [UInt8]) -> Result<HTTPDecoderEvent?, HTTPParseError> {
        var decoder = HTTPRequestDecoder()
        decoder.append(bytes)
        return Result { () throws(HTTPParseError) in try decoder.next() }
    }

    private static func error(_ bytes: [UInt8]) -> HTTPParseError? {
        if case .failure(let error) = firstOutcome(bytes) { return error }
        return nil
    }

    @Test func tcharSetHasSeventySevenBytes() {
        #expect((0...255).filter { Self.isTchar(UInt8($0)) }.count == 77)
    }

    @Test(arguments: 0...255) func methodByte(_ value: Int) {
        let byte = UInt8(value)
        let request = [byte] + Array(" / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        // A one-byte token is never a known method.
        #expect(Self.error(request) == (Self.isTchar(byte) ? .unknownMethod : .invalidRequestLine))
    }

    @Test(arguments: 0...255) func fieldNameByte(_ value: Int) {
        let byte = UInt8(value)
        let request = Array("GET / HTTP/1.1\r\nHost: a\r\n".utf8) + [byte] + Array(": v\r\n\r\n".utf8)
        #expect(Self.error(request) == (Self.isTchar(byte) ? nil : .invalidHeader))
    }

    // RFC 9110 §5.5: field-vchar = VCHAR / obs-text, with SP and HTAB inside a value; CR, LF, NUL and
    // other CTLs and DEL are invalid.
    @Test(arguments: 0...255) func fieldValueByte(_ value: Int) {
        let byte = UInt8(value)
        let request = Array("GET / HTTP/1.1\r\nHost: a\r\nX: a".utf8) + [byte] + Array("b\r\n\r\n".utf8)
        let allowed = byte == 0x09 || byte == 0x20 || (0x21...0x7E).contains(byte) || byte >= 0x80
        #expect(Self.error(request) == (allowed ? nil : .invalidHeader))
    }

    @Test(arguments: 0...255) func targetByte(_ value: Int) {
        let byte = UInt8(value)
        let request = Array("GET /a".utf8) + [byte] + Array(" HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        let expected: HTTPParseError?
        switch byte {
        case 0x20, 0x0D, 0x0A: expected = .invalidRequestLine  // a third SP, a bare CR, a bare LF
        case UInt8(ascii: "#"): expected = .invalidTarget
        case 0x21...0x7E: expected = nil
        default: expected = .invalidTarget
        }
        #expect(Self.error(request) == expected)
    }
}
