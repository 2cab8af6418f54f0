import ChattModel
import JSON
import Viewport

/// The body of `GET /getmaps/clusters` (docs/API.md): a GeoJSON (RFC 7946) FeatureCollection with one `Point`
/// feature for each occupied cell of a tally, in the grid's order. A cell of one chatt is that chatt (its fields
/// and its geodata's facing and speed as properties, at its own position); a cell of more is a cluster, at the mean
/// of their positions, with `"cluster": true` and `"point_count"`.
public enum ClusterFeatures {
    /// The collection for `tally`; `row` gives the bytes of a lone cell's row, as `ChattRowEncoder` writes it (one
    /// that is not gives `null` properties, which never happens for a row the feed holds).
    public static func collection(_ tally: ClusterTally, row: (Int) -> ArraySlice<UInt8>) -> [UInt8] {
        var out = Array(#"{"type":"FeatureCollection","features":["#.utf8)
        for (index, cell) in tally.occupied.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += #"{"type":"Feature","geometry":{"type":"Point","coordinates":["#.utf8
            let center = cell.center
            out += "\(center.longitude),\(center.latitude)".utf8
            out += #"]},"properties":{"#.utf8
            if cell.count == 1 {
                appendChatt(row(cell.row), to: &out)
            } else {
                out += #""cluster":true,"point_count":\#(cell.count)"#.utf8
            }
            out += "}}".utf8
        }
        out += "]}".utf8
        return out
    }

    /// The properties of the chatt of `row`: its first four strings copied as they are written there, and its
    /// geodata's facing and speed.
    private static func appendChatt(_ row: ArraySlice<UInt8>, to out: inout [UInt8]) {
        let elements = EncodedRow.elements(of: row).flatMap { $0.count == 5 ? $0 : nil }
        for (index, key) in ["name", "message", "id", "timestamp"].enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONString.append(key, to: &out)
            out.append(UInt8(ascii: ":"))
            if let elements { out += row[elements[index]] } else { out += "null".utf8 }
        }
        let geodata = elements.flatMap { elements -> Geodata? in
            guard case .string(let text)? = try? JSONParser.parse(Array(row[elements[4]])) else { return nil }
            return try? Geodata(parsing: text)
        }
        appendMember("facing", geodata?.facing, to: &out)
        appendMember("speed", geodata?.speed, to: &out)
    }

    private static func appendMember(_ key: String, _ value: String?, to out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        JSONString.append(key, to: &out)
        out.append(UInt8(ascii: ":"))
        if let value { JSONString.append(value, to: &out) } else { out += "null".utf8 }
    }
}
