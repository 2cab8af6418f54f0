import ChattModel
import Viewport

/// The optional `since`, `limit` and `newest` parameters of `GET /getmaps` and `GET /getchatts` (README
/// "Incremental feeds"), and `bbox` of `GET /getmaps` (README "Viewports"). Any other query key is ignored, as
/// docs/API.md asks of unnamed parameters.
struct FeedQuery: Equatable, Sendable {
    /// Only rows after the chatt with this id, in feed order.
    var since: ChattID?
    /// At most this many rows (the first ones, in feed order, after `since`).
    var limit: Int?
    /// At most this many rows: the last ones, still in feed order (what a map of a crowded box shows).
    var newest: Int?
    /// Only rows located in this box.
    var box: BoundingBox?

    /// No parameters: the whole feed, byte for byte the cached body.
    var isWholeFeed: Bool { since == nil && limit == nil && newest == nil && box == nil }

    /// The most rows an answer may hold: `limit` or `newest`, whichever was given.
    var mostRows: Int { limit ?? newest ?? Int.max }

    /// The longest `limit` accepted, in digits: more than any feed holds, and far from overflowing `Int`.
    static let maxLimitDigits = 9

    /// The answer to a malformed `since`.
    static let badSince = APIError.badRequest("since must be a chatt id")
    /// The answer to a malformed `limit`.
    static let badLimit = APIError.badRequest("limit must be a whole number up to 999999999")
    /// The answer to a malformed `newest`, or one given with `limit`.
    static let badNewest = APIError.badRequest("newest must be a whole number up to 999999999, without limit")
    /// The answer to a malformed `bbox`.
    static let badBox = APIError.badRequest(
        "bbox must be west,south,east,north in degrees: -180 to 180, -90 to 90, south <= north")

    /// Reads the parameters from the query string (the part after `?`); `bbox` only when `located` (the maps feed).
    ///
    /// - Throws: 400 for a `since` that is not a canonical UUID, a `limit` or `newest` that is not 0–999999999 in
    ///   decimal digits, both of those, a malformed `bbox`, or any parameter given twice (which one was meant is
    ///   unclear).
    init(query: String?, located: Bool = true) throws(APIError) {
        for (name, value) in QueryParameters.pairs(of: query) {
            switch name {
            case "since":
                guard since == nil, let id = ChattID(value) else { throw Self.badSince }
                since = id
            case "limit":
                guard limit == nil, let count = QueryParameters.wholeNumber(value, digits: Self.maxLimitDigits)
                else { throw Self.badLimit }
                limit = count
            case "newest":
                guard newest == nil, let count = QueryParameters.wholeNumber(value, digits: Self.maxLimitDigits)
                else { throw Self.badNewest }
                newest = count
            case "bbox" where located:
                guard box == nil, let parsed = QueryParameters.box(value) else { throw Self.badBox }
                box = parsed
            default:
                continue
            }
        }
        if limit != nil, newest != nil { throw Self.badNewest }
    }

    /// The rows a feed of `rowCount` rows answers with when no box is asked for, given where the `since` row is
    /// (nil: from the start).
    func rows(after sinceRow: Int?, of rowCount: Int) -> Range<Int> {
        let start = sinceRow.map { $0 + 1 } ?? 0
        if let newest { return max(start, rowCount - newest)..<rowCount }
        let end = limit.map { min(rowCount, start + $0) } ?? rowCount
        return start..<end
    }
}
