@testable import ChatterClient
import Testing

func response(_ status: Int, _ body: String, reason: String = "", headers: [(String, String)] = [])
    -> HTTPClientResponse
{
    HTTPClientResponse(
        status: status, reason: reason, headers: headers.map { (name: $0.0, value: $0.1) }, body: Array(body.utf8))
}

@Suite struct ChattResponseTests {
    @Test func mapsRowsDecodeAsOptionalStrings() throws {
        let body =
            #"[["alice","hi","id-1","2026-03-25T08:11:59.123456Z","[1,2,\"N\",\"s\"]"],["bob","","id-2","t",null]]"#
        let rows = try ChattResponse.rows(response(200, body), width: 5)
        #expect(
            rows == [
                ["alice", "hi", "id-1", "2026-03-25T08:11:59.123456Z", #"[1,2,"N","s"]"#],
                ["bob", "", "id-2", "t", nil],
            ])
        #expect(try ChattResponse.rows(response(200, " [ ] "), width: 4) == [])
    }

    @Test(arguments: [
        ("{}", "not a JSON array"),
        ("[[\"a\",\"b\",\"c\",\"d\"]]", "row 0 is not an array of 5 elements"),
        ("[[\"a\",\"b\",\"c\",\"d\",null,null]]", "row 0 is not an array of 5 elements"),
        ("[[\"a\",\"b\",\"c\",\"d\",null],[\"a\",\"b\",\"c\",\"d\",1]]", "row 1 holds a value"),
        ("[\"a\"]", "row 0 is not an array"),
        ("<html>", "the body is not JSON"),
        ("", "the body is not JSON"),
    ])
    func malformedRows(body: String, message: String) {
        #expect(
            performing: {
                _ = try ChattResponse.rows(response(200, body), width: 5)
            },
            throws: { error in
                guard case .malformedResponse(let text) = error as? ClientError else { return false }
                return text.contains(message)
            })
    }

    @Test func errorStatusCarriesTheServersReason() {
        let failure = response(400, #"{"error":"name must be 1 to 32 characters"}"#, reason: "Bad Request")
        #expect(throws: ClientError.httpStatus(code: 400, reason: "name must be 1 to 32 characters")) {
            try ChattResponse.checkPosted(failure)
        }
        #expect(throws: ClientError.httpStatus(code: 503, reason: "Service Unavailable")) {
            _ = try ChattResponse.rows(response(503, "busy", reason: "Service Unavailable"), width: 5)
        }
        #expect(throws: ClientError.httpStatus(code: 502, reason: "no reason given")) {
            try ChattResponse.checkPosted(response(502, ""))
        }
        let moved = response(301, "", reason: "Moved", headers: [("Location", "https://elsewhere/")])
        #expect(throws: ClientError.httpStatus(code: 301, reason: "Moved (redirected to https://elsewhere/)")) {
            try ChattResponse.checkPosted(moved)
        }
    }

    @Test func postNeedsAJSONObject() throws {
        try ChattResponse.checkPosted(response(200, "{}"))
        #expect(throws: ClientError.malformedResponse("the answer to a post is not a JSON object")) {
            try ChattResponse.checkPosted(response(200, "<html>ok</html>"))
        }
    }
}
