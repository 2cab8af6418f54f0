import HTTPCore
import Testing

/// The decoder's state between events: what is buffered, whether a request is under way, sticky errors.
@Suite struct HTTPRequestDecoderStateTests {
    private func decoder(_ text: String, limits: HTTPLimits = HTTPLimits()) -> HTTPRequestDecoder {
        var decoder = HTTPRequestDecoder(limits: limits)
        decoder.append(Array(text.utf8))
        return decoder
    }

    /// The first event of a fresh decoder with default limits fed `text` at once.
    private func firstEvent(_ text: String) throws(HTTPParseError) -> HTTPDecoderEvent? {
        var decoder = decoder(text)
        return try decoder.next()
    }

    @Test func returnsRequestWithHeadersInOrderAndValuesTrimmed() throws {
        var decoder = decoder("POST http://h:1/p?q HTTP/1.1\r\nHost: a\r\ncontent-LENGTH: 2\r\nX-A:\t b c \r\nX-A:\r\n\r\nhi")
        let expected = HTTPRequest(
            method: .POST, target: "http://h:1/p?q", path: "/p", query: "q", version: .http1_1,
            headers: HTTPHeaders([("Host", "a"), ("content-LENGTH", "2"), ("X-A", "b c"), ("X-A", "")]),
            body: Array("hi".utf8))
        #expect(try decoder.next() == .request(expected))
        #expect(try decoder.next() == nil)
    }

    @Test func decodesObsTextValuesWithReplacementCharacters() throws {
        var decoder = HTTPRequestDecoder()
        decoder.append(Array("GET / HTTP/1.1\r\nHost: a\r\nX: é".utf8) + [0xFF] + Array("\r\n\r\n".utf8))
        guard case .request(let request) = try decoder.next() else {
            Issue.record("no request")
            return
        }
        #expect(request.headers["x"] == "é\u{FFFD}")
    }

    @Test func isMidRequestIgnoresLeadingEmptyLines() throws {
        var decoder = HTTPRequestDecoder()
        #expect(!decoder.isMidRequest)
        decoder.append(Array("\r\n\r\n\r".utf8))
        #expect(!decoder.isMidRequest)
        #expect(try decoder.next() == nil)
        #expect(!decoder.isMidRequest)
        #expect(decoder.bufferedByteCount == 1)
        decoder.append(Array("\nG".utf8))
        #expect(decoder.isMidRequest)
        #expect(try decoder.next() == nil)
        #expect(decoder.isMidRequest)
        #expect(decoder.bufferedByteCount == 1)
    }

    @Test func isMidRequestStaysTrueWhileHeadLinesAreConsumed() throws {
        var decoder = decoder("GET / HTTP/1.1\r\nHost: a\r\n")
        #expect(try decoder.next() == nil)
        #expect(decoder.bufferedByteCount == 0)
        #expect(decoder.isMidRequest)
        #expect(!decoder.isReadingBody)
    }

    @Test func tracksBodyStateUntilTheRequestIsReturned() throws {
        var decoder = decoder("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nab")
        #expect(try decoder.next() == nil)
        #expect(decoder.isReadingBody)
        #expect(decoder.isMidRequest)
        #expect(decoder.bufferedByteCount == 2)
        decoder.append(Array("cdGET".utf8))
        #expect(try decoder.next() != nil)
        #expect(!decoder.isReadingBody)
        #expect(decoder.isMidRequest)
        #expect(decoder.bufferedByteCount == 3)
    }

    @Test func leavesPipelinedBytesBufferedAfterARequest() throws {
        let second = "GET /b HTTP/1.1\r\nHost: a\r\n\r\n"
        var decoder = decoder("GET /a HTTP/1.1\r\nHost: a\r\n\r\n" + second)
        #expect(try decoder.next() != nil)
        #expect(decoder.bufferedByteCount == second.utf8.count)
        #expect(decoder.isMidRequest)
        #expect(try decoder.next() != nil)
        #expect(decoder.bufferedByteCount == 0)
        #expect(!decoder.isMidRequest)
    }

    @Test func sendsContinueOnceThenTheRequestWhenTheBodyArrives() throws {
        var decoder = decoder("PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(try decoder.next() == .expectContinue)
        #expect(decoder.isReadingBody)
        #expect(try decoder.next() == nil)
        decoder.append(Array("2\r\nhi\r\n".utf8))
        #expect(try decoder.next() == nil)
        decoder.append(Array("0\r\n\r\n".utf8))
        guard case .request(let request) = try decoder.next() else {
            Issue.record("no request")
            return
        }
        #expect(request.body == Array("hi".utf8))
        #expect(try decoder.next() == nil)
    }

    @Test func throwsTheSameErrorForeverAfterTheFirst() {
        var decoder = decoder("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n")
        #expect(throws: HTTPParseError.invalidContentLength) { try decoder.next() }
        decoder.append(Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        #expect(throws: HTTPParseError.invalidContentLength) { try decoder.next() }
        #expect(throws: HTTPParseError.invalidContentLength) { try decoder.next() }
    }

    @Test func decodesManyPipelinedRequestsFedOneByteAtATime() throws {
        let request = Array("POST /postchatt HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789".utf8)
        var decoder = HTTPRequestDecoder()
        var count = 0
        for byte in Array(repeating: request, count: 300).joined() {
            decoder.append(CollectionOfOne(byte))
            while let event = try decoder.next() {
                #expect(event == .request(HTTPRequest(
                    method: .POST, target: "/postchatt", path: "/postchatt",
                    headers: HTTPHeaders([("Host", "a"), ("Content-Length", "10")]), body: Array("0123456789".utf8))))
                count += 1
            }
        }
        #expect(count == 300)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func keepsUnreadBytesAcrossCompaction() throws {
        // 200 requests in one append put the read position past the compaction threshold before the next append.
        let request = "GET /x HTTP/1.1\r\nHost: a\r\n\r\n"
        var decoder = decoder(String(repeating: request, count: 200) + "GET /last HT")
        for _ in 0..<200 { #expect(try decoder.next() != nil) }
        decoder.append(Array("TP/1.1\r\nHost: a\r\n\r\n".utf8))
        guard case .request(let last) = try decoder.next() else {
            Issue.record("no request")
            return
        }
        #expect(last.path == "/last")
    }

    @Test func enforcesTheDefaultLimitsOfAPIMarkdown() throws {
        let limits = HTTPLimits()
        #expect(limits.maxRequestLineBytes == 8192)
        #expect(limits.maxHeaderBytes == 16384)
        #expect(limits.maxHeaderCount == 100)
        #expect(limits.maxBodyBytes == 65536)
        let atLimit = "GET /" + String(repeating: "a", count: 8192 - 14) + " HTTP/1.1"
        #expect(try firstEvent(atLimit + "\r\nHost: a\r\n\r\n") != nil)
        #expect(throws: HTTPParseError.requestLineTooLong) { try firstEvent("GET /a" + atLimit.dropFirst(5)) }
        let fields = (0..<99).map { "X-\($0): v\r\n" }.joined()
        #expect(try firstEvent("GET / HTTP/1.1\r\nHost: a\r\n" + fields + "\r\n") != nil)
        #expect(throws: HTTPParseError.headerTooLarge) { try firstEvent("GET / HTTP/1.1\r\nHost: a\r\n" + fields + "Y: 1\r\n\r\n") }
        // "Host: a\r\n" + "X: " + value + "\r\n" + "\r\n" = 16384 bytes.
        let value = String(repeating: "v", count: 16384 - 16)
        #expect(try firstEvent("GET / HTTP/1.1\r\nHost: a\r\nX: \(value)\r\n\r\n") != nil)
        #expect(throws: HTTPParseError.headerTooLarge) { try firstEvent("GET / HTTP/1.1\r\nHost: a\r\nX: \(value)v\r\n\r\n") }
        #expect(throws: HTTPParseError.bodyTooLarge) { try firstEvent("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 65537\r\n\r\n") }
        let body = String(repeating: "b", count: 65536)
        #expect(try firstEvent("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 65536\r\n\r\n" + body) != nil)
    }

    @Test func acceptsLimitsOfIntMaxWithoutOverflow() throws {
        let limits = HTTPLimits(maxRequestLineBytes: .max, maxHeaderBytes: .max, maxHeaderCount: .max, maxBodyBytes: .max)
        var decoder = decoder(
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n", limits: limits)
        guard case .request(let request) = try decoder.next() else {
            Issue.record("no request")
            return
        }
        #expect(request.body == Array("hi".utf8))
    }
}
