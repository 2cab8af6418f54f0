import ASCII
import Viewport

/// A request's query string (the part after `?`) read as the endpoints that name parameters read it.
enum QueryParameters {
    /// The `name=value` pairs in order: a parameter with no `=` has an empty value, and empty ones (`&&`) are
    /// skipped. Values are as sent, not percent-decoded.
    static func pairs(of query: String?) -> [(name: Substring, value: Substring)] {
        (query ?? "").split(separator: "&", omittingEmptySubsequences: true).map { parameter in
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (parts[0], parts.count == 2 ? parts[1] : "")
        }
    }

    /// A whole number in 1 to `digits` decimal digits and nothing else (no sign, no blank); nil otherwise.
    static func wholeNumber(_ text: Substring, digits: Int) -> Int? {
        guard (1...digits).contains(text.utf8.count),
            text.utf8.allSatisfy(ASCII.isDigit)
        else { return nil }
        return Int(text)
    }

    /// A `bbox` value: `BoundingBox(parsing:)` of the value percent-decoded, since clients escape its commas and
    /// plus signs (browsers' URLSearchParams, Python's urlencode); nil when it cannot be decoded.
    static func box(_ value: Substring) -> BoundingBox? {
        ASCII.percentDecoded(value).flatMap { BoundingBox(parsing: Substring($0)) }
    }
}
