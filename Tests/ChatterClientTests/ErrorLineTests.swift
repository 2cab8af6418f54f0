@testable import ChatterClient
import Testing

/// Error lines quote the server; none may carry a raw control, bidi or invisible character to the terminal.
@Suite struct ErrorLineTests {
    @Test func everyKindOfErrorIsEscaped() {
        let errors: [ClientError] = [
            .usage(everyHostileScalar), .tls(everyHostileScalar), .connection(everyHostileScalar),
            .httpStatus(code: 400, reason: everyHostileScalar), .malformedResponse(everyHostileScalar),
        ]
        for error in errors {
            #expect(rawHostileScalars(error.description).isEmpty, "\(error.exitCode)")
        }
        let error = ClientError.httpStatus(code: 400, reason: "\u{1B}[2J\u{7}\u{202E}evil\\")
        #expect(error.description == #"server answered 400: \u{1B}[2J\u{07}\u{202E}evil\\"#)
    }

    @Test func serversErrorReasonReasonPhraseAndLocation() throws {
        let json = response(400, #"{"error":"bad\u001b[31m red\nline\u202e\u009b"}"#, reason: "Bad Request")
        #expect(throws: ClientError.httpStatus(code: 400, reason: "bad\u{1B}[31m red\nline\u{202E}\u{9B}")) {
            try ChattResponse.checkPosted(json)
        }
        #expect(description(of: { try ChattResponse.checkPosted(json) })
            == #"server answered 400: bad\u{1B}[31m red\u{0A}line\u{202E}\u{9B}"#)

        let moved = response(
            301, "", reason: "Moved\u{1B}]0;x\u{7}", headers: [("Location", "https://h/\u{2066}\u{9B}")])
        #expect(description(of: { try ChattResponse.checkPosted(moved) })
            == #"server answered 301: Moved\u{1B}]0;x\u{07} (redirected to https://h/\u{2066}\u{9B})"#)
    }

    @Test func statusLineAndCodingsFromTheParser() {
        let status = "HTTP/1.1 4\u{1B}[ x\r\n\r\n"
        #expect(description(of: { _ = try parseResponse([ArraySlice(status.utf8)], closed: true) })
            == #"malformed response: bad status code 4\u{1B}["#)
        let encoded = "HTTP/1.1 200 OK\r\nContent-Encoding: gz\u{9B}2J\u{202E}ip\r\n\r\n"
        #expect(description(of: { _ = try parseResponse([ArraySlice(encoded.utf8)], closed: true) })
            == #"malformed response: body encoded as gz\u{9B}2J\u{202E}ip, which chatter did not ask for"#)
        let transfer = "HTTP/1.1 200 OK\r\nTransfer-Encoding: \u{85}\u{2067}x\r\n\r\n"
        #expect(description(of: { _ = try parseResponse([ArraySlice(transfer.utf8)], closed: true) })
            == #"malformed response: unsupported transfer coding \u{85}\u{2067}x"#)
    }

    @Test func invalidUTF8InTheStatusLineNeverReachesTheTerminalRaw() throws {
        // A lone 0x9B byte is CSI to a terminal in 8-bit mode; 0xFF and 0xFE are not UTF-8 at all.
        let head: [UInt8] = Array("HTTP/1.1 503 \u{1B}]0;x\u{7} ".utf8) + [0x9B, 0x32, 0x4A, 0xFF, 0xFE]
        let wire = head + Array("\r\nContent-Length: 0\r\n\r\n".utf8)
        let server = try LoopbackServer(answer: [wire])
        let options = ConnectionOptions(
            server: try ServerURL(parsing: "http://127.0.0.1:\(server.port)"), caFile: nil, timeoutSeconds: 10)
        let line = description(of: {
            _ = try ChattResponse.rows(
                try HTTPExchange.perform(HTTPClientRequest(method: "GET", target: "/", host: "h"), options: options),
                width: 4)
        })
        #expect(line == "server answered 503: \\u{1B}]0;x\\u{07} \u{FFFD}2J\u{FFFD}\u{FFFD}")
    }

    /// The error line `body` fails with, or "" when it does not fail with a `ClientError`.
    func description(of body: () throws -> Void) -> String {
        do {
            try body()
            return ""
        } catch {
            return (error as? ClientError)?.description ?? ""
        }
    }
}
