import HTTPCore

extension HTTPLimits {
    /// Small limits so that limit cases stay short enough to be fed at every split.
    static let small = HTTPLimits(maxRequestLineBytes: 20, maxHeaderBytes: 32, maxHeaderCount: 3, maxBodyBytes: 16)
    /// A 16-byte body limit, with room for the framing headers (64 bytes, 4 fields).
    static let smallBody = HTTPLimits(maxRequestLineBytes: 64, maxHeaderBytes: 64, maxHeaderCount: 4, maxBodyBytes: 16)
}

extension DecoderCase {
    /// Request line: shape, line ends, method, version, target forms, length limit.
    static let requestLine: [DecoderCase] = [
        DecoderCase("simple GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", ["GET / 1.1"]),
        DecoderCase("simple HEAD", "HEAD /getmaps HTTP/1.1\r\nHost: a\r\n\r\n", ["HEAD /getmaps 1.1"]),
        DecoderCase("HTTP/1.0 needs no Host", "GET / HTTP/1.0\r\n\r\n", ["GET / 1.0"]),
        DecoderCase("every known method", """
            PUT / HTTP/1.1\r\nHost: a\r\n\r\nDELETE / HTTP/1.1\r\nHost: a\r\n\r\nTRACE / HTTP/1.1\r\nHost: a\r\n\r\n\
            PATCH / HTTP/1.1\r\nHost: a\r\n\r\nCONNECT / HTTP/1.1\r\nHost: a\r\n\r\n
            """, ["PUT / 1.1", "DELETE / 1.1", "TRACE / 1.1", "PATCH / 1.1", "CONNECT / 1.1"]),
        DecoderCase("registered methods beyond RFC 9110's, the longest too", """
            QUERY / HTTP/1.1\r\nHost: a\r\n\r\nPROPFIND / HTTP/1.1\r\nHost: a\r\n\r\n\
            UPDATEREDIRECTREF / HTTP/1.1\r\nHost: a\r\n\r\nVERSION-CONTROL / HTTP/1.1\r\nHost: a\r\n\r\n
            """, ["QUERY / 1.1", "PROPFIND / 1.1", "UPDATEREDIRECTREF / 1.1", "VERSION-CONTROL / 1.1"]),
        DecoderCase("PRI is not a request method", "PRI / HTTP/1.1\r\nHost: a\r\n\r\n", [], .unknownMethod),
        DecoderCase("incomplete request line", "GET / HTTP/1.1", []),
        DecoderCase("incomplete after CR", "GET / HTTP/1.1\r", []),
        DecoderCase("empty lines before the request line are skipped", "\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", ["GET / 1.1"]),
        DecoderCase("only empty lines", "\r\n\r\n\r\n", []),
        DecoderCase("bare CR before the request line", "\rGET / HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("bare LF before the request line", "\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("CR CR LF before the request line", "\r\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("bare LF ends the request line", "GET / HTTP/1.1\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("bare CR ends the request line", "GET / HTTP/1.1\rHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("bare CR inside the request line", "GET /\r HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("bare LF inside the request line", "GET /\n HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("two spaces after the method", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("two spaces before the version", "GET /  HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("empty method", " / HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("tab as separator", "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("missing target", "GET HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("missing version (HTTP/0.9)", "GET /\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("space inside the target", "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("method with =", "G=T / HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("method with quote", "GE\"T / HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("lower-case method is unknown", "get / HTTP/1.1\r\nHost: a\r\n\r\n", [], .unknownMethod),
        DecoderCase("unknown method FOO", "FOO / HTTP/1.1\r\nHost: a\r\n\r\n", [], .unknownMethod),
        DecoderCase("long unknown token method", "GETGETGETGETGETGETGET / HTTP/1.1\r\nHost: a\r\n\r\n", [], .unknownMethod),
        DecoderCase("HTTP/0.9 version", "GET / HTTP/0.9\r\nHost: a\r\n\r\n", [], .unsupportedVersion),
        DecoderCase("HTTP/1.2 version", "GET / HTTP/1.2\r\nHost: a\r\n\r\n", [], .unsupportedVersion),
        DecoderCase("HTTP/2.0 version", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", [], .unsupportedVersion),
        DecoderCase("HTTP/3.0 version", "GET / HTTP/3.0\r\nHost: a\r\n\r\n", [], .unsupportedVersion),
        DecoderCase("version without minor", "GET / HTTP/1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("version with two-digit major", "GET / HTTP/01.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("version with two-digit minor", "GET / HTTP/1.10\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("lower-case version name", "GET / http/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("version with trailing space", "GET / HTTP/1.1 \r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("HTTPS as version name", "GET / HTTPS/1.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("letter as version digit", "GET / HTTP/a.1\r\nHost: a\r\n\r\n", [], .invalidRequestLine),
        DecoderCase("version checked before method", "get / HTTP/2.0\r\nHost: a\r\n\r\n", [], .unsupportedVersion),
        DecoderCase("method checked before target", "FOO * HTTP/1.1\r\nHost: a\r\n\r\n", [], .unknownMethod),
    ]

    /// Request targets: forms, query split, bad bytes.
    static let targets: [DecoderCase] = [
        DecoderCase("query split at the first ?", "GET /a?b=1&c?d HTTP/1.1\r\nHost: a\r\n\r\n", ["GET /a?b=1&c?d 1.1"]),
        DecoderCase("empty query is not nil", "GET /a? HTTP/1.1\r\nHost: a\r\n\r\n", ["GET /a? 1.1"]),
        DecoderCase("percent-escapes kept", "GET /%7Euser%20x HTTP/1.1\r\nHost: a\r\n\r\n", ["GET /%7Euser%20x 1.1"]),
        DecoderCase("double slash path", "GET //a HTTP/1.1\r\nHost: a\r\n\r\n", ["GET //a 1.1"]),
        DecoderCase("absolute-form", "GET http://example.com/getmaps?x=1 HTTP/1.1\r\nHost: a\r\n\r\n", ["GET /getmaps?x=1 1.1"]),
        DecoderCase("absolute-form https upper-case scheme", "GET HTTPS://example.com HTTP/1.1\r\nHost: a\r\n\r\n", ["GET / 1.1"]),
        DecoderCase("absolute-form with port and query only", "GET http://h:8443?q HTTP/1.1\r\nHost: a\r\n\r\n", ["GET /?q 1.1"]),
        DecoderCase("absolute-form IPv6", "GET http://[::1]:80/a HTTP/1.1\r\nHost: a\r\n\r\n", ["GET /a 1.1"]),
        DecoderCase("absolute-form empty host", "GET http:///a HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidTarget),
        DecoderCase("absolute-form userinfo", "GET http://u@h/ HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidTarget),
        DecoderCase("absolute-form other scheme", "GET ftp://h/ HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidTarget),
        DecoderCase("absolute-form one slash", "GET http:/h/ HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidTarget),
        DecoderCase("authority-form", "CONNECT h:443 HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidTarget),
        DecoderCase("relative target", "GET a HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidTarget),
        DecoderCase("fragment", "GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidTarget),
        DecoderCase("DEL in target", "GET /a\u{7F} HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidTarget),
        DecoderCase("NUL in target", "GET /a\u{0} HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidTarget),
        DecoderCase("obs-text in target", bytes: Array("GET /a".utf8) + [0xC3, 0xA9] + Array(" HTTP/1.1\r\nHost: a\r\n\r\n".utf8), [], .invalidTarget),
        DecoderCase("asterisk with GET", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", [], .invalidTarget),
        DecoderCase("asterisk with OPTIONS", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", ["OPTIONS * 1.1"]),
    ]

    /// The request line limit (20 bytes in `.small`), excluding CRLF.
    static let requestLineLimit: [DecoderCase] = [
        DecoderCase("request line exactly at the limit", "GET /aaaaaa HTTP/1.1\r\nHost: a\r\n\r\n", ["GET /aaaaaa 1.1"], limits: .small),
        DecoderCase("request line one over the limit", "GET /aaaaaaa HTTP/1.1\r\nHost: a\r\n\r\n", [], .requestLineTooLong, limits: .small),
        DecoderCase("at the limit without line end waits", "GET /aaaaaa HTTP/1.1", [], limits: .small),
        DecoderCase("at the limit with CR waits", "GET /aaaaaa HTTP/1.1\r", [], limits: .small),
        DecoderCase("over the limit without line end fails early", "GET /aaaaaaa HTTP/1.1", [], .requestLineTooLong, limits: .small),
        DecoderCase("bare CR after a line at the limit", "GET /aaaaaa HTTP/1.1\rX", [], .invalidRequestLine, limits: .small),
        DecoderCase("skipped empty lines do not count", "\r\n\r\n\r\nGET /aaaaaa HTTP/1.1\r\nHost: a\r\n\r\n", ["GET /aaaaaa 1.1"], limits: .small),
    ]
}
