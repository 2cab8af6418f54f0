import HTTPCore
import Testing

/// Golden bytes of response heads.
@Suite struct HTTPResponseSerializerTests {
    private let date = "Sun, 06 Nov 1994 08:49:37 GMT"

    private func text(_ bytes: some Collection<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func jsonResponseWithKeepAlive() {
        let head = HTTPResponseSerializer.head(.json(.ok, Array("{}".utf8)), keepAlive: true, date: date)
        #expect(text(head) == "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
            + "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n")
    }

    @Test func responseClosingTheConnection() {
        let head = HTTPResponseSerializer.head(.json(.ok, Array("[]".utf8)), keepAlive: false, date: date)
        #expect(text(head) == "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
            + "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\nConnection: close\r\n\r\n")
    }

    @Test func http10KeepAliveIsConfirmed() {
        let head = HTTPResponseSerializer.head(.json(.ok, Array("{}".utf8)), version: .http1_0, keepAlive: true, date: date)
        #expect(text(head) == "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
            + "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\nConnection: keep-alive\r\n\r\n")
    }

    @Test func headGetsTheHeadOfGetWithTheFullContentLength() {
        let body = Array(#"[["a","b"]]"#.utf8)
        let get = HTTPResponseSerializer.head(.json(.ok, body), keepAlive: true, date: date)
        #expect(text(get).contains("Content-Length: 11\r\n"))
        // The caller omits the body for HEAD; the head itself is identical (RFC 9110 §9.3.2).
        #expect(HTTPResponseSerializer.head(.json(.ok, body), keepAlive: true, date: date) == get)
    }

    @Test func continueHasNoFields() {
        #expect(text(HTTPResponseSerializer.continueHead) == "HTTP/1.1 100 Continue\r\n\r\n")
        let head = HTTPResponseSerializer.head(HTTPResponse(status: .continue), keepAlive: true, date: date)
        #expect(head == HTTPResponseSerializer.continueHead)
    }

    @Test func methodNotAllowedErrorWithAllow() {
        let response = HTTPResponse.error(.methodNotAllowed, "method not allowed", headers: HTTPHeaders([("Allow", "GET, HEAD")]))
        #expect(text(response.body) == #"{"error":"method not allowed"}"#)
        let head = HTTPResponseSerializer.head(response, keepAlive: true, date: date)
        #expect(text(head) == "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json\r\nAllow: GET, HEAD\r\n"
            + "Content-Length: 30\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n")
    }

    @Test func parseErrorResponseCarriesItsStatusAndReason() {
        let response = HTTPParseError.unsupportedTransferEncoding.response
        #expect(response.status == .notImplemented)
        #expect(text(response.body) == #"{"error":"unsupported Transfer-Encoding"}"#)
    }
}

/// Which responses carry their body on the wire.
@Suite struct ResponseBodyTests {
    @Test func headAnd304CarryNoBodyButKeepTheRepresentationLength() {
        let body = Array("[1]".utf8)
        #expect(HTTPResponse.json(.ok, body).sendsBody(inAnswerTo: .GET))
        #expect(!HTTPResponse.json(.ok, body).sendsBody(inAnswerTo: .HEAD))
        let notModified = HTTPResponse(status: .notModified, body: body)
        #expect(!notModified.sendsBody(inAnswerTo: .GET))
        let head = HTTPResponseSerializer.head(notModified, keepAlive: true, date: "d")
        #expect(String(decoding: head, as: UTF8.self) == "HTTP/1.1 304 Not Modified\r\nContent-Length: 3\r\nDate: d\r\n\r\n")
        #expect(!HTTPResponse(status: .continue).sendsBody(inAnswerTo: .GET))
        #expect(HTTPResponse.error(.notFound, "not found").sendsBody(inAnswerTo: .POST))
    }
}
