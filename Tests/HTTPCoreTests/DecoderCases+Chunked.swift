import HTTPCore

extension DecoderCase {
    /// A chunked POST with the given body bytes, after a complete head.
    static func chunked(_ note: String, _ body: String, _ events: [String], _ error: HTTPParseError? = nil, limits: HTTPLimits = HTTPLimits()) -> DecoderCase {
        DecoderCase(note, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + body, events, error, limits: limits)
    }

    /// Chunked bodies (RFC 9112 §7.1): sizes, extensions, data CRLF, trailers, limits.
    static let chunkedBodies: [DecoderCase] = {
        let longExtension = ";a=" + String(repeating: "b", count: 4096 - 4)
        // "X: " + 57 bytes + CRLF + CRLF = 64 bytes, the trailer section limit of `.smallBody`.
        let trailer57 = String(repeating: "v", count: 57)
        return [
            chunked("one chunk", "5\r\nhello\r\n0\r\n\r\n", ["POST / 1.1 body=hello"]),
            chunked("two chunks", "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", ["POST / 1.1 body=hello world"]),
            chunked("empty body", "0\r\n\r\n", ["POST / 1.1"]),
            chunked("hex digits in both cases", "a\r\n0123456789\r\nA\r\nabcdefghij\r\n0\r\n\r\n", ["POST / 1.1 body=0123456789abcdefghij"]),
            chunked("leading zeros in size", "0005\r\nhello\r\n000\r\n\r\n", ["POST / 1.1 body=hello"]),
            chunked("incomplete size line", "5", []),
            chunked("incomplete data", "5\r\nhel", []),
            chunked("incomplete data CRLF", "5\r\nhello\r", []),
            chunked("incomplete last chunk", "5\r\nhello\r\n0\r\n", []),
            chunked("extension name", "5;a\r\nhello\r\n0\r\n\r\n", ["POST / 1.1 body=hello"]),
            chunked("extension with token value", "5;a=b\r\nhello\r\n0;last\r\n\r\n", ["POST / 1.1 body=hello"]),
            chunked("extension with quoted value", "5;a=\"q s;\\\"x\"\r\nhello\r\n0\r\n\r\n", ["POST / 1.1 body=hello"]),
            chunked("extensions with BWS", "5; a = b ;c\t;d=\"\"\r\nhello\r\n0\r\n\r\n", ["POST / 1.1 body=hello"]),
            chunked("size line at 4096 bytes", "5\(longExtension)\r\nhello\r\n0\r\n\r\n", ["POST / 1.1 body=hello"]),
            chunked("size line over 4096 bytes", "5\(longExtension)b\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("space after size", "5 \r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("space between size and extension", "5 ;a\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("space before size", " 5\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("empty extension name", "5;\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("empty extension value", "5;a=\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("space after extension", "5;a \r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("unterminated quoted value", "5;a=\"b\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("two tokens as value", "5;a=b c\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("NUL in extension", "5;a=\"\u{0}\"\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("0x prefix", "0x5\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("negative size", "-1\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("plus sign", "+5\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("underscore", "_\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("empty size", "\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("not hex", "g\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("17 hex digits", "00000000000000005\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("16 hex digits over Int", "8000000000000000\r\n", [], .invalidChunk),
            chunked("16 hex digits all f", "ffffffffffffffff\r\n", [], .invalidChunk),
            chunked("Int.max size is too large", "7fffffffffffffff\r\n", [], .bodyTooLarge),
            chunked("bare LF after size", "5\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("bare CR after size", "5\rhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("data longer than size", "3\r\nhello\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("data followed by other byte", "5\r\nhelloX\r\n0\r\n\r\n", [], .invalidChunk),
            chunked("data followed by CR and other byte", "5\r\nhello\rX0\r\n\r\n", [], .invalidChunk),
            chunked("data followed by bare LF", "5\r\nhello\n0\r\n\r\n", [], .invalidChunk),
            chunked("bare LF ends the last chunk", "0\n\r\n", [], .invalidChunk),
            chunked("trailer fields are read and dropped", "5\r\nhello\r\n0\r\nX-Sum: 1\r\nY:2\r\n\r\n", ["POST / 1.1 body=hello"]),
            chunked("invalid trailer field", "0\r\nX : 1\r\n\r\n", [], .invalidChunk),
            chunked("obs-fold in trailers", "0\r\nX: 1\r\n 2\r\n\r\n", [], .invalidChunk),
            chunked("bare LF in trailers", "0\r\nX: 1\n\r\n", [], .invalidChunk),
            chunked("bare LF ends trailers", "0\r\nX: 1\r\n\n", [], .invalidChunk),
            chunked("trailers at the size limit", "0\r\nX: \(trailer57)\r\n\r\n", ["POST / 1.1"], limits: .smallBody),
            chunked("trailers over the size limit", "0\r\nX: \(trailer57)v\r\n\r\n", [], .headerTooLarge, limits: .smallBody),
            chunked("trailers over the count limit", "0\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n\r\n", [], .headerTooLarge, limits: .smallBody),
            chunked("body exactly at the limit", "8\r\n01234567\r\n8\r\n89abcdef\r\n0\r\n\r\n", ["POST / 1.1 body=0123456789abcdef"], limits: .smallBody),
            chunked("one chunk over the limit fails before its data", "11\r\n", [], .bodyTooLarge, limits: .smallBody),
            chunked("second chunk over the limit fails before its data", "8\r\n01234567\r\n9\r\n", [], .bodyTooLarge, limits: .smallBody),
            chunked("followed by another request", "5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", ["POST / 1.1 body=hello", "GET / 1.1"]),
        ]
    }()

    /// Keep-alive and pipelining: several requests on one connection, and an error in the middle.
    static let pipelines: [DecoderCase] = [
        DecoderCase("two requests one after the other", "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n", ["GET /a 1.1", "GET /b 1.1"]),
        DecoderCase("three pipelined requests", """
            GET /getmaps HTTP/1.1\r\nHost: a\r\n\r\nPOST /postmaps HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}\
            HEAD / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n
            """, ["GET /getmaps 1.1", "POST /postmaps 1.1 body={}", "HEAD / 1.0"]),
        DecoderCase("empty lines between requests", "GET /a HTTP/1.1\r\nHost: a\r\n\r\n\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n", ["GET /a 1.1", "GET /b 1.1"]),
        DecoderCase("second request incomplete", "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HT", ["GET /a 1.1"]),
        DecoderCase("error in the middle of a pipeline", """
            GET /a HTTP/1.1\r\nHost: a\r\n\r\nPOST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\nGET /c HTTP/1.1\r\nHost: a\r\n\r\n
            """, ["GET /a 1.1"], .invalidContentLength),
        DecoderCase("error after a body in a pipeline", """
            POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/9.9\r\nHost: a\r\n\r\n
            """, ["POST /a 1.1 body=abc"], .unsupportedVersion),
    ]
}
