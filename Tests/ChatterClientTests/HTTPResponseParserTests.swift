@testable import ChatterClient
import Testing

/// Feeds `wire` to a fresh parser in the given pieces, then finishes it if `closed`.
func parseResponse(_ pieces: [ArraySlice<UInt8>], closed: Bool, maxBodyBytes: Int = 1 << 20) throws(ClientError)
    -> HTTPClientResponse?
{
    var parser = HTTPResponseParser(maxBodyBytes: maxBodyBytes)
    for piece in pieces {
        if let response = try parser.receive(piece) { return response }
    }
    return closed ? try parser.finish() : nil
}

/// Every way of cutting `wire` in two, plus one byte at a time, plus all at once.
func splits(_ wire: [UInt8]) -> [[ArraySlice<UInt8>]] {
    let whole = wire[...]
    let pairs = (0...wire.count).map { [whole[..<$0], whole[$0...]] }
    return pairs + [wire.indices.map { whole[$0...$0] }]
}

@Suite struct HTTPResponseParserTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var note: String
        var wire: String
        /// Whether the server closes after sending `wire`.
        var closed: Bool
        var status: Int
        var body: String
        var testDescription: String { note }
    }

    @Test(arguments: [
        Case(
            note: "content-length", wire: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", closed: false,
            status: 200, body: "{}"),
        Case(
            note: "bytes after the body are ignored", wire: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}XYZ",
            closed: false, status: 200, body: "{}"),
        Case(
            note: "content-length list of equal values", wire: "HTTP/1.1 200 OK\r\nContent-length: 3 , 3\r\n\r\nabc",
            closed: false, status: 200, body: "abc"),
        Case(
            note: "zero length", wire: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", closed: false, status: 200,
            body: ""),
        Case(
            note: "chunked with extension and trailer",
            wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n"
                + "3;x=y\r\n[\"a\r\n0A \r\n\",\"b\",\"c\"]\r\n0\r\nX-T: 1\r\n\r\n",
            closed: false, status: 200, body: "[\"a\",\"b\",\"c\"]"),
        Case(
            note: "bare LF line ends", wire: "HTTP/1.1 200 OK\nContent-Length: 1\n\nx", closed: false, status: 200,
            body: "x"),
        Case(
            note: "close-delimited body", wire: "HTTP/1.0 200 OK\r\n\r\n[1,2]", closed: true, status: 200,
            body: "[1,2]"),
        Case(
            note: "interim 100 Continue is skipped",
            wire: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\n!", closed: false,
            status: 201, body: "!"),
        Case(
            note: "204 has no body even with a length", wire: "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n",
            closed: false, status: 204, body: ""),
        Case(
            note: "no reason phrase", wire: "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n", closed: false, status: 404,
            body: ""),
        Case(
            note: "identity content-encoding",
            wire: "HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\nContent-Length: 1\r\n\r\n1",
            closed: false, status: 200, body: "1"),
    ])
    func parses(_ c: Case) throws {
        for pieces in splits(Array(c.wire.utf8)) {
            let response = try #require(try parseResponse(pieces, closed: c.closed), "incomplete: \(c.note)")
            #expect(response.status == c.status, "\(c.note)")
            #expect(response.body == Array(c.body.utf8), "\(c.note), split \(pieces.map(\.count))")
        }
    }

    @Test func headersAndReasonAreKept() throws {
        let wire =
            "HTTP/1.1 422 Unprocessable Content\r\nContent-Type:  application/json \r\nX-A: 1\r\nx-a: 2\r\n"
            + "Content-Length: 0\r\n\r\n"
        let response = try #require(try parseResponse([Array(wire.utf8)[...]], closed: false))
        #expect(response.reason == "Unprocessable Content")
        #expect(response.values(of: "content-type") == ["application/json"])
        #expect(response.values(of: "X-A") == ["1", "2"])
    }

    @Test func incompleteUntilTheLastByte() throws {
        let wire = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n".utf8)
        #expect(try parseResponse([wire.dropLast()], closed: false) == nil)
        #expect(try parseResponse([wire[...]], closed: false)?.body == Array("ab".utf8))
    }

    @Test func largeBodyInManyPieces() throws {
        let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
        let wire = Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
        let pieces = stride(from: 0, to: wire.count, by: 1000).map { wire[$0..<min($0 + 1000, wire.count)] }
        #expect(try parseResponse(pieces, closed: false)?.body == body)
    }

    @Test(arguments: [
        ("not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", false, "not an HTTP/1.x response"),
        ("HTTP/2 preface", "HTTP/2 200\r\n\r\n", false, "not an HTTP/1.x response"),
        ("bad status", "HTTP/1.1 20x OK\r\n\r\n", false, "bad status code"),
        ("status below 100", "HTTP/1.1 099 Odd\r\n\r\n", false, "bad status code"),
        ("space before colon", "HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\nx", false, "bad header field"),
        ("folded field", "HTTP/1.1 200 OK\r\nX: a\r\n  b\r\n\r\n", false, "bad header field"),
        ("control in value", "HTTP/1.1 200 OK\r\nX: a\u{1}b\r\n\r\n", false, "control character"),
        (
            "conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx", false,
            "bad Content-Length"
        ),
        ("signed length", "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx", false, "bad Content-Length"),
        ("huge length", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", false, "bad Content-Length"),
        (
            "gzip body", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 1\r\n\r\nx", false,
            "encoded as gzip"
        ),
        (
            "gzip transfer coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", false,
            "unsupported transfer coding"
        ),
        ("bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, "bad chunk size"),
        (
            "signed chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+1\r\nx\r\n0\r\n\r\n", false,
            "bad chunk size"
        ),
        (
            "chunk overrun", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n0\r\n\r\n", false,
            "chunk data longer"
        ),
        ("upgrade", "HTTP/1.1 101 Switching Protocols\r\n\r\n", false, "switched protocols"),
        ("truncated body", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", true, "3 bytes before the end"),
        ("truncated chunks", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", true, "last chunk"),
        ("truncated head", "HTTP/1.1 200 OK\r\nContent-", true, "middle of the response head"),
    ])
    func rejects(note: String, wire: String, closed: Bool, message: String) {
        #expect(
            performing: {
                _ = try parseResponse([Array(wire.utf8)[...]], closed: closed)
            },
            throws: { error in
                guard case .malformedResponse(let text) = error as? ClientError else { return false }
                return text.contains(message)
            })
    }

    @Test func closedBeforeAnyByteIsAConnectionFailure() {
        #expect(throws: ClientError.connection("the server closed the connection without answering")) {
            _ = try parseResponse([], closed: true)
        }
    }

    @Test func limitsAreEnforced() throws {
        let body = String(repeating: "x", count: 101)
        let fixed = Array("HTTP/1.1 200 OK\r\nContent-Length: 101\r\n\r\n\(body)".utf8)
        #expect(throws: ClientError.malformedResponse("body larger than 100 bytes")) {
            _ = try parseResponse([fixed[...]], closed: false, maxBodyBytes: 100)
        }
        let chunked = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n\(body)\r\n0\r\n\r\n".utf8)
        #expect(throws: ClientError.malformedResponse("body larger than 100 bytes")) {
            _ = try parseResponse([chunked[...]], closed: false, maxBodyBytes: 100)
        }
        let exact = Array("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n\(body.dropLast())".utf8)
        #expect(try parseResponse([exact[...]], closed: false, maxBodyBytes: 100)?.body.count == 100)

        let longLine = Array(
            "HTTP/1.1 200 OK\r\nX: \(String(repeating: "a", count: HTTPResponseParser.maxLineBytes))".utf8)
        #expect(throws: ClientError.malformedResponse("line too long")) {
            _ = try parseResponse([longLine[...]], closed: false)
        }
        let field = "X: \(String(repeating: "a", count: 1000))\r\n"
        let manyFields = Array(("HTTP/1.1 200 OK\r\n" + String(repeating: field, count: 70)).utf8)
        #expect(throws: ClientError.malformedResponse("response head too large")) {
            _ = try parseResponse([manyFields[...]], closed: false)
        }
        let countFields = Array(("HTTP/1.1 200 OK\r\n" + String(repeating: "X: 1\r\n", count: 201)).utf8)
        #expect(throws: ClientError.malformedResponse("too many header fields")) {
            _ = try parseResponse([countFields[...]], closed: false)
        }
    }
}

@Suite struct StreamingResponseParserTests {
    /// Feeds `pieces` and returns the head once, the body bytes joined, and whether the response ended.
    func stream(_ pieces: [ArraySlice<UInt8>]) throws -> (heads: [HTTPClientResponse], body: String, complete: Bool) {
        var parser = HTTPResponseParser(maxBodyBytes: 24)
        var heads: [HTTPClientResponse] = []
        var body: [UInt8] = []
        var complete = false
        for piece in pieces {
            let part = try parser.receiveStreaming(piece)
            heads += part.head.map { [$0] } ?? []
            #expect(part.head == nil || heads.count == 1, "the head comes once")
            #expect(heads.count == 1 || part.body.isEmpty, "no body before the head")
            body += part.body
            complete = part.isComplete
        }
        return (heads, String(decoding: body, as: UTF8.self), complete)
    }

    @Test func anEventStreamBodyComesOutAsItArrives() throws {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        let events = ":\n", more = "id: 1-1\ndata: [\"a\"]\n\n"
        let chunks = "2\r\n\(events)\r\n\(String(more.utf8.count, radix: 16))\r\n\(more)\r\n"
        for pieces in splits(Array((head + chunks).utf8)) {
            let (heads, body, complete) = try stream(pieces)
            #expect(heads.map(\.status) == [200] && heads[0].body.isEmpty)
            #expect(body == events + more && !complete, "a stream whose body has not ended")
        }
        // The body limit applies to each call: a stream may go on for ever.
        let long = (0..<10).map { _ in Array("14\r\n\(String(repeating: ":", count: 19))\n\r\n".utf8)[...] }
        let (_, forever, _) = try stream([Array(head.utf8)[...]] + long)
        #expect(forever.utf8.count == 200)
        let (_, _, complete) = try stream([Array((head + chunks + "0\r\n\r\n").utf8)[...]])
        #expect(complete, "the last chunk ends it")
    }

    @Test func anInterimResponseIsNotTheHead() throws {
        let wire = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Busy\r\nContent-Length: 2\r\n\r\n{}"
        let (heads, body, complete) = try stream([Array(wire.utf8)[...]])
        #expect(heads.map(\.status) == [503] && body == "{}" && complete)
    }
}
