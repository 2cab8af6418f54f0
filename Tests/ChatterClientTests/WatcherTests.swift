@testable import ChatterClient
import Testing

/// A stream that answers `head` and then hands out `pieces`, then ends (or fails with `cut`).
final class ScriptedStream: StreamingResponse {
    let answer: HTTPClientResponse
    var pieces: [String]
    let cut: ClientError?

    init(_ pieces: [String], answer: HTTPClientResponse = eventStream, cut: ClientError? = nil) {
        self.answer = answer
        self.pieces = pieces
        self.cut = cut
    }

    func head() throws(ClientError) -> HTTPClientResponse { answer }

    func nextBody() throws(ClientError) -> [UInt8]? {
        guard !pieces.isEmpty else {
            if let cut { throw cut }
            return nil
        }
        return Array(pieces.removeFirst().utf8)
    }
}

/// What a `Watcher` did with scripted streams and feed answers: requests, output and notices in order.
final class WatchRecord {
    var streams: [ScriptedStream]
    var feeds: [HTTPClientResponse]
    var log: [String] = []

    init(streams: [ScriptedStream], feeds: [HTTPClientResponse] = []) {
        self.streams = streams
        self.feeds = feeds
    }

    /// Runs `words` until the script runs out (the last open fails as untrusted TLS, which ends the watch).
    func run(_ words: [String]) throws -> ClientError {
        guard case .watch(let command, let options) = try ChatterCommand.parse(
            words + ["--server", "http://h"], environment: [:], fileExists: { _ in false })
        else { throw LoopbackError() }
        let effects = Watcher<FixedRandom>.Effects(
            open: { (request, _) throws(ClientError) in
                self.log.append("open \(request.target) \(request.accept) \(request.lastEventID ?? "-")")
                guard !self.streams.isEmpty else { throw .tls("end of script") }
                return self.streams.removeFirst()
            },
            send: { (request, _) throws(ClientError) in
                self.log.append("send \(request.target)")
                return self.feeds.removeFirst()
            },
            sleep: { self.log.append("sleep \($0)") }, output: { self.log.append("out \($0)") },
            notice: { self.log.append("notice \($0)") })
        var watcher = Watcher(command, options: options, generator: FixedRandom(value: 0), effects: effects)
        do {
            try watcher.run()
        } catch {
            return error
        }
    }
}

@Suite struct WatcherTests {
    @Test func showsChattsAndResumesAfterADrop() throws {
        let record = WatchRecord(streams: [
            ScriptedStream([
                "id: 1-1\ndata: [\"a\",\"m1\",\"u1\",\"t\"]\n", "\n:\n",
                "id: 1-2\ndata: [\"b\",\"m2\",\"u2\",\"t\"]\n\n",
            ]),
            ScriptedStream(["id: 1-3\r\ndata: [\"c\",\"m3\",\"u3\",\"t\"]\r\n\r\n"], cut: .connection("reset")),
        ])
        #expect(try record.run(["watch", "--format", "json"]) == .tls("end of script"))
        #expect(
            record.log == [
                "open /getchatts/stream text/event-stream -",
                #"out ["a","m1","u1","t"]"# + "\n",
                #"out ["b","m2","u2","t"]"# + "\n",
                "notice the live feed ended; trying again in 0.0 s",
                "open /getchatts/stream text/event-stream 1-2",
                #"out ["c","m3","u3","t"]"# + "\n",
                "notice the live feed dropped: reset; trying again in 0.0 s",
                "open /getchatts/stream text/event-stream 1-3",
            ])
    }

    @Test func aResetFetchesThePositionAndShowsNoneOfTheFeed() throws {
        let feed = response(
            200, #"[["old","x","u0","t",null]]"#,
            headers: [("Feed-Position", "7-0"), ("Content-Type", "application/json")])
        let record = WatchRecord(
            streams: [
                ScriptedStream(["id: 1-1\ndata: [\"a\",\"m\",\"u1\",\"t\",null]\n\nevent: reset\ndata: {}\n\n"]),
                ScriptedStream(["id: 7-1\ndata: [\"b\",\"m\",\"u2\",\"t\",null]\n\n"]),
            ], feeds: [feed])
        #expect(try record.run(["watch", "--maps"]) == .tls("end of script"))
        #expect(record.log.count == 9)
        #expect(record.log[0] == "open /getmaps/stream text/event-stream -")
        #expect(record.log[1].hasPrefix("out TIME (UTC)") && record.log[2].contains(" a "))
        #expect(record.log[3].hasPrefix("notice the server cannot resume the live feed"))
        #expect(record.log[4] == "send /getmaps?limit=0")
        #expect(record.log[5] == "open /getmaps/stream text/event-stream 7-0")
        #expect(record.log[6].contains(" b ") && !record.log.contains { $0.contains("old") }, "no header again")
        #expect(record.log[7] == "notice the live feed ended; trying again in 0.0 s")
        #expect(record.log[8] == "open /getmaps/stream text/event-stream 7-1")
    }

    @Test func aRefusalEndsTheWatchWithTheServersReason() throws {
        let refused = response(400, #"{"error":"bad Last-Event-ID"}"#)
        let record = WatchRecord(streams: [ScriptedStream([], answer: refused)])
        #expect(try record.run(["watch"]) == .httpStatus(code: 400, reason: "bad Last-Event-ID"))
        #expect(record.log == ["open /getchatts/stream text/event-stream -"])
    }

    @Test func geoJSONLeavesOutChattsWithoutALocation() throws {
        let record = WatchRecord(streams: [
            ScriptedStream([
                "id: 1\ndata: [\"a\",\"m\",\"u1\",\"t\",null]\n\n",
                "id: 2\ndata: [\"b\",\"m\",\"u2\",\"t\",\"[1]\"]\n\n",
                "id: 3\ndata: [\"c\",\"m\",\"u3\",\"t\",\"[1,2,\\\"N\\\",\\\"s\\\"]\"]\n\n",
            ])
        ])
        _ = try record.run(["watch", "--format", "geojson"])
        #expect(record.log[0] == "open /getmaps/stream text/event-stream -", "GeoJSON reads the maps feed")
        #expect(record.log[1] == "notice warning: left out chatt u2 whose geodata is not [lat, lon, facing, speed]")
        #expect(record.log[2].hasPrefix(#"out {"type":"Feature","id":"u3""#))
        #expect(record.log[3].hasPrefix("notice the live feed ended"))
    }
}
