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
            text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int(text)
    }

    /// A `bbox` value: `BoundingBox(parsing:)` of the value percent-decoded, since clients escape its commas and
    /// plus signs (browsers' URLSearchParams, Python's urlencode); a `%` not followed by two hex digits stays.
    static func box(_ value: Substring) -> BoundingBox? {
        BoundingBox(parsing: Substring(percentDecoded(value)))
    }

    /// `text` with each `%` and two hex digits replaced by the byte they name (RFC 3986 §2.1); `+` stays `+`.
    static func percentDecoded(_ text: Substring) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        let bytes = Array(text.utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = ASCII.hexValue(bytes[index + 1]), let low = ASCII.hexValue(bytes[index + 2])
            {
                decoded.append(UInt8(high << 4 | low))
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}
