import HTTPCore

extension DecoderCase {
    /// Field line syntax and the header section limits (32 bytes and 3 fields in `.small`).
    static let headers: [DecoderCase] = [
        DecoderCase("incomplete header section", "GET / HTTP/1.1\r\nHost: a\r\n", []),
        DecoderCase("incomplete final CRLF", "GET / HTTP/1.1\r\nHost: a\r\n\r", []),
        DecoderCase("whitespace around values", "GET / HTTP/1.1\r\nHost: a\r\nX:  \t v w \t \r\n\r\n", ["GET / 1.1"]),
        DecoderCase("empty value", "GET / HTTP/1.1\r\nHost: a\r\nX:\r\n\r\n", ["GET / 1.1"]),
        DecoderCase("UTF-8 and obs-text in a value", bytes: Array("GET / HTTP/1.1\r\nHost: a\r\nX: é".utf8) + [0xFF, 0x80] + Array("\r\n\r\n".utf8), ["GET / 1.1"]),
        DecoderCase("obs-fold", "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n", [], .invalidHeader),
        DecoderCase("obs-fold with tab", "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n\tb\r\n\r\n", [], .invalidHeader),
        DecoderCase("space before the first field line", "GET / HTTP/1.1\r\n Host: a\r\n\r\n", [], .invalidHeader),
        DecoderCase("space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", [], .invalidHeader),
        DecoderCase("space before colon in Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length : 1\r\n\r\nx", [], .invalidHeader),
        DecoderCase("tab before colon", "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", [], .invalidHeader),
        DecoderCase("no colon", "GET / HTTP/1.1\r\nHost a\r\n\r\n", [], .invalidHeader),
        DecoderCase("empty name", "GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", [], .invalidHeader),
        DecoderCase("non-token name", "GET / HTTP/1.1\r\nHost: a\r\nX(Y: b\r\n\r\n", [], .invalidHeader),
        DecoderCase("space inside name", "GET / HTTP/1.1\r\nHost: a\r\nX Y: b\r\n\r\n", [], .invalidHeader),
        DecoderCase("NUL in value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\u{0}b\r\n\r\n", [], .invalidHeader),
        DecoderCase("DEL in value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\u{7F}b\r\n\r\n", [], .invalidHeader),
        DecoderCase("VT in value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\u{0B}b\r\n\r\n", [], .invalidHeader),
        DecoderCase("bare CR in value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", [], .invalidHeader),
        DecoderCase("bare LF ends a field line", "GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", [], .invalidHeader),
        DecoderCase("bare LF ends the section", "GET / HTTP/1.1\r\nHost: a\r\n\n", [], .invalidHeader),
        DecoderCase("bare CR ends the section", "GET / HTTP/1.1\r\nHost: a\r\n\rX", [], .invalidHeader),
        DecoderCase("header checked before Host", "GET / HTTP/1.1\r\nX: \u{1}\r\n\r\n", [], .invalidHeader),
        DecoderCase("section exactly at the limit", "GET / HTTP/1.1\r\nHost: a\r\nX: 0123456789abcdef\r\n\r\n", ["GET / 1.1"], limits: .small),
        DecoderCase("section one over the limit by its final CRLF", "GET / HTTP/1.1\r\nHost: a\r\nX: 0123456789abcdefg\r\n\r\n", [], .headerTooLarge, limits: .small),
        DecoderCase("size checked as bytes arrive, before line syntax", "GET / HTTP/1.1\r\nHost: a\r\nX: 0123456789abcdef\r\nY\r\n\r\n", [], .headerTooLarge, limits: .small),
        DecoderCase("section at the limit waits for the final CRLF", "GET / HTTP/1.1\r\nHost: a\r\nX: 0123456789abcdef\r\n", [], limits: .small),
        DecoderCase("section over the limit fails before its end", "GET / HTTP/1.1\r\nHost: a\r\nX: 0123456789abcdefghij", [], .headerTooLarge, limits: .small),
        DecoderCase("syntax error found before the size", "GET / HTTP/1.1\r\nX : a\r\nY: 0123456789abcdefghijklmnop\r\n\r\n", [], .invalidHeader, limits: .small),
        DecoderCase("field count at the limit", "GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\n\r\n", ["GET / 1.1"], limits: .small),
        DecoderCase("field count one over the limit", "GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", [], .headerTooLarge, limits: .small),
    ]
}
