import ChattModel
import JSON
import Viewport

/// The body of `GET /getmaps/clusters` (docs/API.md): a GeoJSON (RFC 7946) FeatureCollection with one `Point`
/// feature for each occupied cell of a tally, in the grid's order. A cell of one chatt is that chatt (its fields
/// and its geodata's facing and speed as properties, at its own position); a cell of more is a cluster, at the mean
/// of their positions, with `"cluster": true` and `"point_count"`.
public enum ClusterFeatures {
    /// The collection for `tally`; `chatt` gives the chatt of a lone cell's row (nil: shown as a cluster of one
    /// would be wrong, so its fields are empty strings, which never happens for a row the feed holds).
    public static func collection(_ tally: ClusterTally, chatt: (Int) -> StoredChatt?) -> [UInt8] {
        var out = Array(#"{"type":"FeatureCollection","features":["#.utf8)
        for (index, cell) in tally.occupied.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += #"{"type":"Feature","geometry":{"type":"Point","coordinates":["#.utf8
            let center = cell.center
            out += "\(center.longitude),\(center.latitude)".utf8
            out += #"]},"properties":{"#.utf8
            if cell.count == 1 {
                let shown = chatt(cell.row)
                let geodata = (shown?.geodata).flatMap { try? Geodata(parsing: $0) }
                appendMember("name", shown?.name, to: &out, first: true)
                appendMember("message", shown?.message, to: &out)
                appendMember("id", shown?.id, to: &out)
                appendMember("timestamp", shown?.timestamp, to: &out)
                appendMember("facing", geodata?.facing, to: &out)
                appendMember("speed", geodata?.speed, to: &out)
            } else {
                out += #""cluster":true,"point_count":\#(cell.count)"#.utf8
            }
            out += "}}".utf8
        }
        out += "]}".utf8
        return out
    }

    private static func appendMember(_ key: String, _ value: String?, to out: inout [UInt8], first: Bool = false) {
        if !first { out.append(UInt8(ascii: ",")) }
        JSONString.append(key, to: &out)
        out.append(UInt8(ascii: ":"))
        if let value { JSONString.append(value, to: &out) } else { out += "null".utf8 }
    }
}
