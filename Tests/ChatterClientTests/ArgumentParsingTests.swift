@testable import ChatterClient
import Testing
import Viewport

@Suite struct ArgumentParsingTests {
    let local: ServerURL

    init() throws {
        local = try ServerURL(parsing: "https://localhost:8443")
    }

    func parse(_ words: [String], env: [String: String] = [:], files: Set<String> = []) throws(ClientError)
        -> ChatterCommand
    {
        try ChatterCommand.parse(words, environment: env, fileExists: { files.contains($0) })
    }

    @Test func postWithoutLocationHasNullGeodata() throws {
        let command = try parse(["post", "--name", "alice", "--message", "hi"])
        #expect(
            command == .post(PostCommand(name: "alice", message: "hi"), ConnectionOptions(server: local, caFile: nil)))
    }

    @Test func postWithLocationAndEqualsForm() throws {
        let command = try parse([
            "--name=alice", "post", "--message=", "--lat", "42.5", "--lon=-83.25", "--facing", "North",
        ])
        let expected = PostCommand(
            name: "alice", message: "", location: Location(latitude: 42.5, longitude: -83.25, facing: "North"))
        #expect(command == .post(expected, ConnectionOptions(server: local, caFile: nil)))
    }

    @Test func valuesMayStartWithDashes() throws {
        let command = try parse(["post", "--name", "-x-", "--message", "--help"])
        #expect(
            command == .post(PostCommand(name: "-x-", message: "--help"), ConnectionOptions(server: local, caFile: nil))
        )
    }

    @Test func getOptions() throws {
        #expect(try parse(["get"]) == .get(GetCommand(), ConnectionOptions(server: local, caFile: nil)))
        let command = try parse(["get", "--maps", "--format", "json", "--timeout", "2.5"])
        #expect(
            command
                == .get(
                    GetCommand(maps: true, format: .json),
                    ConnectionOptions(server: local, caFile: nil, timeoutSeconds: 2.5)))
        #expect(GetCommand(maps: false, format: .geojson).endpoint == "getmaps")
        #expect(GetCommand(maps: false, format: .json).endpoint == "getchatts")
    }

    @Test func getTakesABoxAndTheNewest() throws {
        guard case .get(let get, _) = try parse(["get", "--bbox", "170,-10,-170,10", "--newest", "500"]) else {
            Issue.record("not a get")
            return
        }
        #expect(get.box == BoundingBox(west: 170, south: -10, east: -170, north: 10))
        #expect(get.endpoint == "getmaps", "a box needs locations")
        #expect(get.query == "?bbox=170.0,-10.0,-170.0,10.0&newest=500")
        #expect(GetCommand().query == "")
        for bad in [["--bbox", "1,2,3"], ["--bbox", "0,10,1,5"], ["--newest", "-1"], ["--newest", "1e3"]] {
            #expect(throws: ClientError.self) { try parse(["get"] + bad) }
        }
        guard case .watch(let watch, _) = try parse(["watch", "--bbox", "0,0,1,1"]) else {
            Issue.record("not a watch")
            return
        }
        #expect(watch.endpoint == "getmaps" && watch.streamQuery == "?bbox=0.0,0.0,1.0,1.0")
        #expect(throws: ClientError.self, "a stream has no newest") { try parse(["watch", "--newest", "3"]) }
    }

    @Test func watchTakesTheOptionsOfGet() throws {
        #expect(try parse(["watch"]) == .watch(GetCommand(), ConnectionOptions(server: local, caFile: nil)))
        let command = try parse(["watch", "--maps", "--format=geojson", "--server", "http://h:1"])
        let server = try ServerURL(parsing: "http://h:1")
        let expected = ChatterCommand.watch(
            GetCommand(maps: true, format: .geojson), ConnectionOptions(server: server, caFile: nil))
        #expect(command == expected)
    }

    @Test func helpAndVersionWinAnywhere() throws {
        #expect(try parse(["--help"]) == .help)
        #expect(try parse(["post", "-h"]) == .help)
        #expect(try parse(["get", "--version"]) == .version)
        #expect(try parse(["-V"]) == .version)
    }

    @Test func serverAndCAFileComeFromFlagsThenEnvironmentThenDefaults() throws {
        let env = ["CHATTER_SERVER": "http://example.org:8080/x/", "CHATTER_CACERT": "/env.crt"]
        let fromEnv = try #require(options(try parse(["get"], env: env)))
        #expect(fromEnv.server == (try ServerURL(parsing: "http://example.org:8080/x")) && fromEnv.caFile == "/env.crt")

        let flags = ["post", "--name", "n", "--message", "m", "--server", "https://h", "--cacert", "/f.crt"]
        let fromFlags = try #require(options(try parse(flags, env: env)))
        #expect(fromFlags.server.host == "h" && fromFlags.caFile == "/f.crt")

        let defaults = try #require(options(try parse(["get"], env: ["CHATTER_CACERT": ""], files: ["./chatterd.crt"])))
        #expect(defaults.caFile == nil && defaults.localCertificate == "./chatterd.crt" && defaults.server == local)
        let none = try #require(options(try parse(["get"])))
        #expect(none.caFile == nil && none.localCertificate == nil, "no ./chatterd.crt: the system's CAs")
        let named = try #require(options(try parse(["get", "--cacert", "/f.crt"], files: ["./chatterd.crt"])))
        #expect(named.caFile == "/f.crt" && named.localCertificate == nil, "--cacert replaces ./chatterd.crt")
    }

    func options(_ command: ChatterCommand) -> ConnectionOptions? {
        switch command {
        case .post(_, let options), .get(_, let options), .watch(_, let options), .delete(_, let options): options
        case .help, .version: nil
        }
    }

    @Test(arguments: [
        ([], "missing command"),
        (["fetch"], "unknown command fetch: use post, get, watch or delete"),
        (["post", "--message", "m"], "post needs --name"),
        (["post", "--name", "n"], "post needs --message"),
        (["post", "--name", "n", "--message", "m", "--lat", "1"], "--lat and --lon go together"),
        (["post", "--name", "n", "--message", "m", "--lon", "1"], "--lat and --lon go together"),
        (["post", "--name", "n", "--message", "m", "--speed", "fast"], "--facing and --speed need a location"),
        (["post", "--name", "n", "--message", "m", "--lat", "91", "--lon", "0"], "--lat must be within -90...90"),
        (["post", "--name", "n", "--message", "m", "--lat", "0", "--lon", "-180.5"], "--lon must be within"),
        (["post", "--name", "n", "--message", "m", "--lat", "nan", "--lon", "0"], "--lat needs a number"),
        (["post", "--name", "n", "--message", "m", "--lat", "0x10", "--lon", "0"], "--lat needs a number"),
        (["post", "--name", "n", "--message", "m", "--maps"], "--maps is not an option of post"),
        (["post", "--name", "a", "--name", "b", "--message", "m"], "--name given twice"),
        (["post", "--name"], "--name needs a value"),
        (["get", "--name", "n"], "--name is not an option of get"),
        (["get", "--format", "xml"], "--format must be table, json or geojson"),
        (["get", "--timeout", "0"], "--timeout needs a number of seconds"),
        (["get", "--frobnicate"], "unknown option --frobnicate"),
        (["get", "extra"], "unexpected argument extra"),
        (["get", "--server", "ftp://h"], "must start with https:// or http://"),
        (["watch", "--message", "m"], "--message is not an option of watch"),
        (["watch", "--format", "csv"], "--format must be table, json or geojson"),
    ])
    func usageErrors(words: [String], message: String) {
        #expect {
            try parse(words)
        } throws: { error in
            guard case .usage(let text) = error as? ClientError else { return false }
            return text.contains(message)
        }
    }

    @Test func usageErrorsExitWith64() {
        #expect(ClientError.usage("x").exitCode == 64)
        let codes = [
            ClientError.usage(""), .tls(""), .connection(""), .httpStatus(code: 400, reason: ""),
            .malformedResponse(""),
        ].map(\.exitCode)
        #expect(Set(codes).count == codes.count, "each failure kind has its own exit status")
    }
}
