import ChattModel
import JSON

/// Reads chatterd's answers as docs/API.md defines them.
public enum ChattResponse {
    /// Row width of `/getmaps`: name, message, id, timestamp, geodata.
    public static let mapsWidth = 5
    /// Row width of `/getchatts`: name, message, id, timestamp.
    public static let chattsWidth = 4

    /// Checks the answer to a post: 2xx with a JSON object body (`{}`).
    public static func checkPosted(_ response: HTTPClientResponse) throws(ClientError) {
        try requireSuccess(response)
        guard case .object? = try? JSONParser.parse(response.body) else {
            throw .malformedResponse("the answer to a post is not a JSON object")
        }
    }

    /// The rows of a `/getmaps` or `/getchatts` answer, decoded as the iOS app does: `[[String?]]`, each row
    /// exactly `width` elements.
    public static func rows(_ response: HTTPClientResponse, width: Int) throws(ClientError) -> [[String?]] {
        try requireSuccess(response)
        let value: JSONValue
        do {
            value = try JSONParser.parse(response.body)
        } catch {
            throw .malformedResponse("the body is not JSON (\(error))")
        }
        guard case .array(let items) = value else { throw .malformedResponse("the body is not a JSON array") }
        var rows: [[String?]] = []
        rows.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            rows.append(try row(item, width: width, named: "row \(index)"))
        }
        return rows
    }

    /// One row: a JSON array of exactly `width` strings or nulls; `name` says which in an error.
    public static func row(_ item: JSONValue, width: Int, named name: String) throws(ClientError) -> [String?] {
        guard case .array(let elements) = item, elements.count == width else {
            throw .malformedResponse("\(name) is not an array of \(width) elements")
        }
        return try elements.map { (element) throws(ClientError) -> String? in
            switch element {
            case .string(let text): return text
            case .null: return nil
            default: throw .malformedResponse("\(name) holds a value that is neither a string nor null")
            }
        }
    }

    /// Throws `.httpStatus` unless the status is 2xx.
    public static func requireSuccess(_ response: HTTPClientResponse) throws(ClientError) {
        guard !(200..<300).contains(response.status) else { return }
        throw .httpStatus(code: response.status, reason: reason(response))
    }

    /// The server's `{"error": "..."}` text; else the reason phrase (and where a redirect points). As sent:
    /// `ClientError.description` escapes it for the terminal.
    static func reason(_ response: HTTPClientResponse) -> String {
        if let value = try? JSONParser.parse(response.body), case .string(let text)? = value["error"] {
            return text
        }
        let phrase = response.reason.isEmpty ? "no reason given" : response.reason
        guard let location = response.values(of: "location").first else { return phrase }
        return "\(phrase) (redirected to \(location))"
    }
}
