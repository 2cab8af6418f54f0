import ChattModel
@testable import ChatterClient
import JSON
import Testing

let sampleRows: [[String?]] = [
    [
        "alice", "hi", "3f2b0c9e-8a4d-4f7e-9a51-2c6d1e0b7a11", "2026-03-25T08:11:59.123456Z",
        #"[42.2936,-83.7166,"North","walking"]"#,
    ],
    ["bob", "no location", "9c0e0000-0000-4000-8000-000000000001", "2026-03-25T08:12:03.000001Z", nil],
    [
        "carol", "south", "9c0e0000-0000-4000-8000-000000000002", "2026-03-25T08:12:04.000001Z",
        #"[-33.5,151.25,"East","driving"]"#,
    ],
    ["dave", "broken", "9c0e0000-0000-4000-8000-000000000003", "2026-03-25T08:12:05.000001Z", "[1,2]"],
]

@Suite struct TableFormatterTests {
    @Test func chattsTableIsAligned() {
        let rows = sampleRows.map { Array($0.prefix(4)) }
        let text = TableFormatter.render(rows, maps: false)
        #expect(
            text == """
                TIME (UTC)           NAME   MESSAGE
                2026-03-25 08:11:59  alice  hi
                2026-03-25 08:12:03  bob    no location
                2026-03-25 08:12:04  carol  south
                2026-03-25 08:12:05  dave   broken

                """)
    }

    @Test func mapsTableShowsLocationColumns() {
        let lines = TableFormatter.render(sampleRows, maps: true).split(separator: "\n")
        #expect(lines[0] == "TIME (UTC)           NAME   MESSAGE      LAT        LON       FACING  SPEED")
        #expect(lines[1] == "2026-03-25 08:11:59  alice  hi           42.2936    -83.7166  North   walking")
        #expect(lines[2] == "2026-03-25 08:12:03  bob    no location  -          -         -       -")
        #expect(lines[4] == "2026-03-25 08:12:05  dave   broken       (invalid)  -         -       -")
    }

    @Test func longAndHostileTextIsCutAndEscaped() {
        let message = String(repeating: "é", count: 60)
        let rows: [[String?]] = [["n\u{1b}]0;x\u{7}", message, "id", "odd time"]]
        let lines = TableFormatter.render(rows, maps: false).split(separator: "\n")
        let cut = String(repeating: "é", count: TableFormatter.maxMessageWidth - 1) + "…"
        #expect(lines[1] == #"odd time    n\u{1B}]0;x\u{07}  "# + cut)
        #expect(!lines.contains { $0.hasSuffix(" ") }, "no trailing spaces")
    }

    @Test func emptyListPrintsTheHeader() {
        #expect(TableFormatter.render([], maps: false) == "TIME (UTC)  NAME  MESSAGE\n")
    }
}

@Suite struct RowsJSONFormatterTests {
    @Test func roundTripsThroughAStrictParser() throws {
        let rows: [[String?]] = sampleRows + [["q\"uote\\", "tab\tnl\n\u{7f}", "id", "t", nil]]
        let text = RowsJSONFormatter.render(rows)
        let items = try #require(try JSONParser.parse(text).arrayItems)
        let decoded = items.map { ($0.arrayItems ?? []).map(\.stringValue) }
        #expect(decoded == rows)
        #expect(text.split(separator: "\n").count == rows.count + 2, "one row per line")
        #expect(RowsJSONFormatter.render([]) == "[]\n")
    }
}

@Suite struct GeoJSONFormatterTests {
    @Test func featureCollectionOfLocatedChatts() throws {
        let output = GeoJSONFormatter.render(sampleRows)
        #expect(output.skipped == 1, "dave's geodata does not parse")
        let root = try JSONParser.parse(output.text)
        #expect(root["type"] == .string("FeatureCollection"))
        let features = try #require(root["features"]?.arrayItems)
        #expect(features.count == 2, "bob has no location, dave's is broken")
        try checkFeature(
            features[0], lon: -83.7166, lat: 42.2936, row: sampleRows[0], facing: "North", speed: "walking")
        try checkFeature(features[1], lon: 151.25, lat: -33.5, row: sampleRows[2], facing: "East", speed: "driving")
    }

    @Test func emptyCollection() throws {
        let output = GeoJSONFormatter.render([sampleRows[1]])
        #expect(
            output == GeoJSONFormatter.Output(text: "{\"type\":\"FeatureCollection\",\"features\":[]}\n", skipped: 0))
    }

    /// RFC 7946: a Feature with a Point geometry of [longitude, latitude] and the chatt in its properties.
    func checkFeature(_ feature: JSONValue, lon: Double, lat: Double, row: [String?], facing: String, speed: String)
        throws
    {
        #expect(feature["type"] == .string("Feature"))
        #expect(feature["id"] == row[2].map(JSONValue.string))
        let geometry = try #require(feature["geometry"])
        #expect(geometry["type"] == .string("Point"))
        let coordinates = try #require(geometry["coordinates"]?.arrayItems)
        #expect(coordinates.map(\.numberValue) == [lon, lat], "GeoJSON order is [longitude, latitude]")
        let properties = try #require(feature["properties"])
        let expected: [(String, String?)] = [
            ("name", row[0]), ("message", row[1]), ("id", row[2]),
            ("timestamp", row[3]), ("facing", facing), ("speed", speed),
        ]
        for (key, value) in expected {
            #expect(properties[key] == value.map(JSONValue.string), "property \(key)")
        }
    }
}

/// The one-row-at-a-time forms `chatter watch` prints.
@Suite struct StreamingFormatterTests {
    @Test func tableRowsUseFixedColumnsUnderTheHeader() {
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: width - text.count + 2)
        }
        let header = TableFormatter.streamingHeader(maps: true)
        let line = TableFormatter.streamingLine(sampleRows[0], maps: true)
        #expect(
            header == pad("TIME (UTC)", 19) + pad("NAME", 20) + pad("MESSAGE", 48) + pad("LAT", 12) + pad("LON", 12)
                + pad("FACING", 12) + "SPEED\n")
        #expect(
            line == pad("2026-03-25 08:11:59", 19) + pad("alice", 20) + pad("hi", 48) + pad("42.2936", 12)
                + pad("-83.7166", 12) + pad("North", 12) + "walking\n")
        #expect(line.hasSuffix("walking\n") && header.hasSuffix("SPEED\n"))
        let chatts = TableFormatter.streamingLine(Array(sampleRows[1].prefix(4)), maps: false)
        #expect(chatts == "2026-03-25 08:12:03  bob                   no location\n", "the last column is not padded")
    }

    @Test func jsonRowsAreOneLineEach() throws {
        let line = RowsJSONFormatter.line(["a\u{1b}", nil, "id", "t"])
        #expect(line == #"["a\u001b",null,"id","t"]"# + "\n")
    }

    @Test func geoJSONFeaturesAreOneLineEach() throws {
        guard case .feature(let text) = GeoJSONFormatter.line(sampleRows[0]) else {
            Issue.record("no feature")
            return
        }
        #expect(text.hasSuffix("}\n") && text.filter { $0 == "\n" }.count == 1)
        let feature = try JSONParser.parse(String(text.dropLast()))
        #expect(feature["type"]?.stringValue == "Feature" && feature["id"]?.stringValue == sampleRows[0][2])
        let collection = GeoJSONFormatter.render([sampleRows[0]]).text
        #expect(collection.contains(String(text.dropLast())), "the same Feature as in get's collection")
        #expect(GeoJSONFormatter.line(sampleRows[1]) == .noLocation)
        #expect(GeoJSONFormatter.line(sampleRows[3]) == .badLocation)
    }

    @Test func aRemovalIsOneObjectALineInTheJSONAndGeoJSONForms() throws {
        let json = RowsJSONFormatter.removalLine("a\u{1B}b")
        #expect(json == #"{"removed":"a\u001bb"}"# + "\n")
        let feature = GeoJSONFormatter.removalLine("3f2b0c9e-8a4d-4f7e-9a51-2c6d1e0b7a11")
        #expect(feature == #"{"type":"Feature","id":"3f2b0c9e-8a4d-4f7e-9a51-2c6d1e0b7a11","geometry":null,"#
            + #""properties":{"removed":true}}"# + "\n")
        #expect(feature.filter { $0 == "\n" }.count == 1 && json.filter { $0 == "\n" }.count == 1)
    }
}
