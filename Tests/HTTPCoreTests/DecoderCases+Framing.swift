import HTTPCore

extension DecoderCase {
    /// Host (RFC 9112 §3.2): exactly one in HTTP/1.1, at most one in 1.0, always a valid `host[:port]`.
    static let host: [DecoderCase] = {
        let valid = [
            "example.com", "example.com:8443", "127.0.0.1:80", "[::1]:8443", "[2001:db8::1]", "[::ffff:1.2.3.4]",
            "[1:2:3:4:5:6:7:8]", "[v1.fe:x]", "a%20b", "host:", "xn--bcher-kva.example", "a!$&'()*+,;=-._~",
        ]
        let invalid = [
            "", "a@b", "a/b", "a b", "a:b", ":80", "[::1", "[::1]x", "[zz::1]", "a%2", "a%zz", "[1:2:3:4:5:6:7:8:9]",
            "[1::2::3]", "[::1.2.3.256]", "a:80:90", "[]", "[v1]", "a?b", "a\"b",
        ]
        let accepted = valid.map {
            DecoderCase("valid Host \($0)", "GET / HTTP/1.1\r\nHost: \($0)\r\n\r\n", ["GET / 1.1"])
        }
        let rejected = invalid.map {
            DecoderCase("invalid Host \($0)", "GET / HTTP/1.1\r\nHost: \($0)\r\n\r\n", [], .invalidHost)
        }
        return accepted + rejected + [
            DecoderCase("HTTP/1.1 without Host", "GET / HTTP/1.1\r\nX: a\r\n\r\n", [], .invalidHost),
            DecoderCase("HTTP/1.1 with two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", [], .invalidHost),
            DecoderCase("HTTP/1.0 with two Hosts", "GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", [], .invalidHost),
            DecoderCase("HTTP/1.0 with an invalid Host", "GET / HTTP/1.0\r\nHost: a@b\r\n\r\n", [], .invalidHost),
            DecoderCase("HTTP/1.0 with a valid Host", "GET / HTTP/1.0\r\nHOST: a:1\r\n\r\n", ["GET / 1.0"]),
            DecoderCase("absolute-form still needs Host", "GET http://a/ HTTP/1.1\r\n\r\n", [], .invalidHost),
            DecoderCase("Host checked before Content-Length", "POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", [], .invalidHost),
        ]
    }()

    /// Content-Length (RFC 9112 §6.3, RFC 9110 §8.6) and bodies framed by it (16-byte body limit in `.small`).
    static let contentLength: [DecoderCase] = {
        let invalid = ["+5", "-1", "0x5", "5_0", "5 5", "", "5,", ",5", "5,,5", "1.5", "5, 6", "99999999999999999999"]
        let rejected = invalid.map {
            DecoderCase("Content-Length \($0)", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \($0)\r\n\r\nhello", [], .invalidContentLength)
        }
        return rejected + [
            DecoderCase("POST with a body", "POST /postchatt HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", ["POST /postchatt 1.1 body=hello"]),
            DecoderCase("POST without length has an empty body", "POST / HTTP/1.1\r\nHost: a\r\n\r\n", ["POST / 1.1"]),
            DecoderCase("Content-Length 0", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", ["POST / 1.1"]),
            DecoderCase("incomplete body", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhel", []),
            DecoderCase("leading zeros", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 005\r\n\r\nhello", ["POST / 1.1 body=hello"]),
            DecoderCase("list of one value", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5 ,\t5\r\n\r\nhello", ["POST / 1.1 body=hello"]),
            DecoderCase("repeated lines of one value", "POST / HTTP/1.1\r\nHost: a\r\ncontent-length: 5\r\nContent-Length: 5\r\n\r\nhello", ["POST / 1.1 body=hello"]),
            DecoderCase("lines with different values", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", [], .invalidContentLength),
            DecoderCase("Int overflow", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9223372036854775808\r\n\r\n", [], .invalidContentLength),
            DecoderCase("GET with a body returns it", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 16\r\n\r\nGET /x HTTP/1.1\n", ["GET / 1.1 body=GET /x HTTP/1.1\n"]),
            DecoderCase("body exactly at the limit", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 16\r\n\r\n0123456789abcdef", ["POST / 1.1 body=0123456789abcdef"], limits: .smallBody),
            DecoderCase("body one over the limit fails before the body", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 17\r\n\r\n", [], .bodyTooLarge, limits: .smallBody),
            DecoderCase("huge Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9223372036854775807\r\n\r\n", [], .bodyTooLarge),
        ]
    }()

    /// Transfer-Encoding (RFC 9112 §6.1, §6.3): only `chunked` alone, never with Content-Length or in 1.0.
    static let transferEncoding: [DecoderCase] = {
        let cases: [(String, HTTPParseError)] = [
            ("gzip", .unsupportedTransferEncoding), ("identity", .unsupportedTransferEncoding),
            ("xchunked", .unsupportedTransferEncoding), ("chunked;q=1", .unsupportedTransferEncoding),
            ("gzip, chunked", .unsupportedTransferEncoding), ("chunked, gzip", .invalidTransferEncoding),
            ("chunked, chunked", .invalidTransferEncoding), ("gzip, chunked, chunked", .invalidTransferEncoding),
            ("", .invalidTransferEncoding), ("chunked,", .invalidTransferEncoding), (", chunked", .invalidTransferEncoding),
            ("chunked,,chunked", .invalidTransferEncoding),
        ]
        let rejected = cases.map { value, error in
            DecoderCase("Transfer-Encoding \(value)", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \(value)\r\n\r\n", [], error)
        }
        let body = "5\r\nhello\r\n0\r\n\r\n"
        return rejected + [
            DecoderCase("chunked in any case", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:  ChUnKeD \r\n\r\n\(body)", ["POST / 1.1 body=hello"]),
            DecoderCase("codings over two lines", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", [], .unsupportedTransferEncoding),
            DecoderCase("chunked on two lines", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", [], .invalidTransferEncoding),
            DecoderCase("Transfer-Encoding with Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n\(body)", [], .conflictingLengthHeaders),
            DecoderCase("Content-Length with Transfer-Encoding", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n\(body)", [], .conflictingLengthHeaders),
            DecoderCase("invalid Content-Length checked first", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\nTransfer-Encoding: chunked\r\n\r\n", [], .invalidContentLength),
            DecoderCase("Transfer-Encoding in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n\(body)", [], .invalidTransferEncoding),
        ]
    }()

    /// Expect (RFC 9110 §10.1.1): 100-continue in 1.1 only, and only while the body is still to come.
    static let expect: [DecoderCase] = [
        DecoderCase("100-continue before the body", "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", ["100-continue"]),
        DecoderCase("100-continue with part of the body", "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhel", ["100-continue"]),
        DecoderCase("100-continue with the whole body sends none", "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello", ["POST / 1.1 body=hello"]),
        DecoderCase("100-continue any case", "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 5\r\n\r\n", ["100-continue"]),
        DecoderCase("100-continue chunked", "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n", ["100-continue"]),
        DecoderCase("100-continue chunked with the whole body", "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", ["POST / 1.1"]),
        DecoderCase("100-continue without a body", "GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n", ["GET / 1.1"]),
        DecoderCase("100-continue with Content-Length 0", "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n", ["POST / 1.1"]),
        DecoderCase("100-continue then the next request", "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhiGET / HTTP/1.1\r\nHost: a\r\n\r\n", ["POST / 1.1 body=hi", "GET / 1.1"]),
        DecoderCase("other expectation", "POST / HTTP/1.1\r\nHost: a\r\nExpect: foo\r\nContent-Length: 5\r\n\r\n", [], .unsupportedExpectation),
        DecoderCase("100-continue in a list", "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue, foo\r\nContent-Length: 5\r\n\r\n", [], .unsupportedExpectation),
        DecoderCase("empty expectation", "POST / HTTP/1.1\r\nHost: a\r\nExpect:\r\nContent-Length: 5\r\n\r\n", [], .unsupportedExpectation),
        DecoderCase("body size checked before Expect", "POST / HTTP/1.1\r\nHost: a\r\nExpect: foo\r\nContent-Length: 17\r\n\r\n", [], .bodyTooLarge, limits: .smallBody),
        DecoderCase("too large with 100-continue sends none", "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 17\r\n\r\n", [], .bodyTooLarge, limits: .smallBody),
        DecoderCase("HTTP/1.0 ignores 100-continue", "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", []),
        DecoderCase("HTTP/1.0 ignores other expectations", "POST / HTTP/1.0\r\nExpect: foo\r\nContent-Length: 2\r\n\r\nhi", ["POST / 1.0 body=hi"]),
    ]
}
