@testable import ChatterClient
import Testing

@Suite struct ChatterRunnerTests {
    /// Runs `words` with a fake server that records the request and answers `answer`.
    func run(_ words: [String], answer: HTTPClientResponse) throws -> (ChatterRunner.Output, HTTPClientRequest?) {
        let command = try ChatterCommand.parse(words, environment: [:], fileExists: { _ in false })
        var seen: HTTPClientRequest?
        let output = try ChatterRunner.run(command) { (request, _) throws(ClientError) in
            seen = request
            return answer
        }
        return (output, seen)
    }

    @Test func postSendsTheAppsBody() throws {
        let words = [
            "post", "--server", "https://example.org:8443/base", "--name", "alice", "--message", "hi",
            "--lat", "42.2936", "--lon", "-83.7166", "--facing", "North", "--speed", "walking",
        ]
        let (output, request) = try run(words, answer: response(200, "{}"))
        #expect(output == ChatterRunner.Output(text: "", warnings: []))
        let body = #"{"name":"alice","message":"hi","geodata":"[42.2936,-83.7166,\"North\",\"walking\"]"}"#
        let expected =
            "POST /base/postmaps HTTP/1.1\r\nHost: example.org:8443\r\nUser-Agent: chatter/\(chatterVersion)\r\n"
            + "Accept: application/json\r\nConnection: close\r\n"
            + "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        #expect(request.map { String(decoding: $0.bytes, as: UTF8.self) } == expected)
    }

    @Test func getChooseEndpointAndWidth() throws {
        let chatts = #"[["a","m","id","2026-03-25T08:11:59.123456Z"]]"#
        let (table, request) = try run(["get", "--server", "http://h"], answer: response(200, chatts))
        #expect(request?.target == "/getchatts" && request?.method == "GET" && request?.jsonBody == nil)
        #expect(
            request.map { String(decoding: $0.bytes, as: UTF8.self) }?.hasPrefix(
                "GET /getchatts HTTP/1.1\r\nHost: h\r\n") == true)
        #expect(table.text.hasSuffix("2026-03-25 08:11:59  a     m\n"))

        let maps = #"[["a","m","id","t","[1,2,\"N\",\"s\"]"],["b","m","id","t","[1,2]"]]"#
        let (json, mapsRequest) = try run(["get", "--maps", "--format", "json"], answer: response(200, maps))
        #expect(mapsRequest?.target == "/getmaps" && mapsRequest?.host == "localhost:8443")
        #expect(json.text.contains(#"["a","m","id","t","[1,2,\"N\",\"s\"]"]"#))

        let (geo, geoRequest) = try run(["get", "--format", "geojson"], answer: response(200, maps))
        #expect(geoRequest?.target == "/getmaps", "GeoJSON needs locations")
        #expect(geo.text.contains(#""coordinates":[2.0,1.0]"#))
        #expect(geo.warnings == ["left out 1 chatt(s) whose geodata is not [lat, lon, facing, speed]"])
    }

    @Test func getRejectsRowsOfTheWrongWidth() {
        #expect(throws: ClientError.malformedResponse("row 0 is not an array of 5 elements")) {
            _ = try run(["get", "--maps"], answer: response(200, #"[["a","m","id","t"]]"#))
        }
    }

    @Test func helpListsEveryExitStatus() throws {
        let (help, request) = try run(["--help"], answer: response(500, ""))
        #expect(request == nil)
        for code in [64, 65, 66, 67, 68] {
            #expect(help.text.contains("\n  \(code)  "), "exit status \(code) documented")
        }
        #expect(try run(["--version"], answer: response(500, "")).0.text == "chatter \(chatterVersion)\n")
    }
}
