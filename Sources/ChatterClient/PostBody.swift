import HTTPCore
import JSON

/// The JSON body of `POST /postmaps` (docs/API.md): name, message, and geodata as a string or `null`.
public enum PostBody {
    /// `{"name":…,"message":…,"geodata":…}` with `geodata` null when there is no location.
    public static func encode(name: String, message: String, location: Location?) -> [UInt8] {
        var body = Array(#"{"name":"#.utf8)
        JSONString.append(name, to: &body)
        body.append(contentsOf: #","message":"#.utf8)
        JSONString.append(message, to: &body)
        body.append(contentsOf: #","geodata":"#.utf8)
        if let location {
            JSONString.append(location.geodataText, to: &body)
        } else {
            body.append(contentsOf: "null".utf8)
        }
        body.append(UInt8(ascii: "}"))
        return body
    }
}
