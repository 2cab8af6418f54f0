import ChattModel

/// Turns `/getmaps` rows into an RFC 7946 GeoJSON FeatureCollection, one Point feature per located chatt;
/// its strings are escaped as `TerminalJSONString` does, so it is safe to print on a terminal.
public enum GeoJSONFormatter {
    /// The GeoJSON text, and how many rows were left out because their geodata does not parse.
    public struct Output: Equatable, Sendable {
        public var text: String
        public var skipped: Int
    }

    /// The collection of rows that have geodata; coordinates are `[longitude, latitude]` (RFC 7946 §3.1.1).
    public static func render(_ rows: [[String?]]) -> Output {
        var out = Array(#"{"type":"FeatureCollection","features":["#.utf8)
        var count = 0
        var skipped = 0
        for row in rows where row.count == ChattResponse.mapsWidth {
            guard let text = row[4] else { continue }
            guard let geodata = try? Geodata(parsing: text) else {
                skipped += 1
                continue
            }
            out.append(contentsOf: (count == 0 ? "\n" : ",\n").utf8)
            appendFeature(row, geodata, to: &out)
            count += 1
        }
        out.append(contentsOf: (count == 0 ? "]}\n" : "\n]}\n").utf8)
        return Output(text: String(decoding: out, as: UTF8.self), skipped: skipped)
    }

    /// What one row becomes on a line of its own, as `chatter watch` prints it.
    public enum Line: Equatable, Sendable {
        /// The row's Feature and a newline.
        case feature(String)
        /// The row has no geodata: nothing to show.
        case noLocation
        /// The row's geodata is not `[lat, lon, facing, speed]`.
        case badLocation
    }

    /// One `/getmaps` row as a Feature on a line of its own.
    public static func line(_ row: [String?]) -> Line {
        guard row.count == ChattResponse.mapsWidth, let text = row[4] else { return .noLocation }
        guard let geodata = try? Geodata(parsing: text) else { return .badLocation }
        var out: [UInt8] = []
        appendFeature(row, geodata, to: &out)
        out.append(UInt8(ascii: "\n"))
        return .feature(String(decoding: out, as: UTF8.self))
    }

    /// `{"type":"Feature","id":"<id>","geometry":null,"properties":{"removed":true}}` and a newline: a removal among
    /// the Features `line` prints.
    public static func removalLine(_ id: String) -> String {
        var out = Array(#"{"type":"Feature","id":"#.utf8)
        TerminalJSONString.append(id, to: &out)
        out.append(contentsOf: Array(#","geometry":null,"properties":{"removed":true}}"#.utf8) + [UInt8(ascii: "\n")])
        return String(decoding: out, as: UTF8.self)
    }

    /// `{"type":"Feature","id":…,"geometry":{…},"properties":{…}}` for one row.
    private static func appendFeature(_ row: [String?], _ geodata: Geodata, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"type":"Feature","#.utf8)
        if let id = row[2] {
            // RFC 7946 §3.2: a feature's identifier goes in "id"; it is also kept among the properties.
            out.append(contentsOf: #""id":"#.utf8)
            TerminalJSONString.append(id, to: &out)
            out.append(UInt8(ascii: ","))
        }
        // Double's description is the shortest text that reads back as the same number, and is valid JSON.
        let point = #""geometry":{"type":"Point","coordinates":[\#(geodata.longitude),\#(geodata.latitude)]},"#
        out.append(contentsOf: point.utf8)
        let properties: [(String, String?)] = [
            ("name", row[0]), ("message", row[1]), ("id", row[2]), ("timestamp", row[3]),
            ("facing", geodata.facing), ("speed", geodata.speed),
        ]
        out.append(contentsOf: #""properties":{"#.utf8)
        for (index, (key, value)) in properties.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            TerminalJSONString.append(key, to: &out)
            out.append(UInt8(ascii: ":"))
            if let value {
                TerminalJSONString.append(value, to: &out)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        }
        out.append(contentsOf: "}}".utf8)
    }
}
