import ChattModel

/// The optional `since` and `limit` parameters of `GET /getmaps` and `GET /getchatts` (README
/// "Incremental feeds"). Any other query key is ignored, as docs/API.md asks of unnamed parameters.
struct FeedQuery: Equatable, Sendable {
    /// Only rows after the chatt with this id, in feed order.
    var since: ChattID?
    /// At most this many rows (the first ones, in feed order, after `since`).
    var limit: Int?

    /// No parameters: the whole feed, byte for byte the cached body.
    var isWholeFeed: Bool { since == nil && limit == nil }

    /// The longest `limit` accepted, in digits: more than any feed holds, and far from overflowing `Int`.
    static let maxLimitDigits = 9

    /// The answer to a malformed `since`.
    static let badSince = APIError.badRequest("since must be a chatt id")
    /// The answer to a malformed `limit`.
    static let badLimit = APIError.badRequest("limit must be a whole number up to 999999999")

    /// Reads `since` and `limit` from the query string (the part after `?`).
    ///
    /// - Throws: 400 for a `since` that is not a canonical UUID, a `limit` that is not 0–999999999 in
    ///   decimal digits, or either given twice (which one was meant is unclear).
    init(query: String?) throws(APIError) {
        guard let query, !query.isEmpty else { return }
        for parameter in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = parts.count == 2 ? parts[1] : ""
            switch parts[0] {
            case "since":
                guard since == nil, let id = ChattID(value) else { throw Self.badSince }
                since = id
            case "limit":
                guard limit == nil, let count = Self.parseLimit(value) else { throw Self.badLimit }
                limit = count
            default:
                continue
            }
        }
    }

    private static func parseLimit(_ text: Substring) -> Int? {
        guard (1...maxLimitDigits).contains(text.utf8.count),
            text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int(text)
    }

    /// The rows `range` of a feed of `rowCount` rows selects, given where the `since` row is (nil: from the
    /// start).
    func rows(after sinceRow: Int?, of rowCount: Int) -> Range<Int> {
        let start = sinceRow.map { $0 + 1 } ?? 0
        let end = limit.map { min(rowCount, start + $0) } ?? rowCount
        return start..<end
    }
}
