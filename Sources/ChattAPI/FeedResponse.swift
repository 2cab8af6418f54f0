import HTTPCore

/// Answers a feed request from an encoded feed: picks the gzip or identity representation, cuts a
/// `since`/`limit` slice, and answers 304 when the client's `If-None-Match` names what it would get.
enum FeedResponse {
    /// 404 for a `since` id the feed does not hold (README "Incremental feeds" says why 404).
    static let unknownSince = APIError(.notFound, "since names no chatt in the feed")

    /// The response, or nil when `waiting` is false and answering needs something not made yet (the gzip
    /// body or the row index): the caller then retries where it may wait.
    static func make(
        for request: HTTPRequest, query: FeedQuery, from feed: EncodedFeed, waiting: Bool
    ) -> HTTPResponse? {
        let representation: FeedRepresentation
        switch select(request, query, feed, waiting) {
        case nil: return nil
        case .failure(let error): return error.response
        case .success(let selected): representation = selected
        }
        // A 304 keeps the body so that Content-Length names the 200's length; the server does not send it.
        // It also keeps every header of the 200 (API.md asks for Content-Type on every response).
        let condition = EntityTagCondition(fieldValues: request.headers.values("If-None-Match"))
        let status: HTTPStatus = condition?.matches(representation.etag) == true ? .notModified : .ok
        return HTTPResponse(status: status, headers: representation.headers, body: representation.body)
    }

    private static func select(
        _ request: HTTPRequest, _ query: FeedQuery, _ feed: EncodedFeed, _ waiting: Bool
    ) -> Result<FeedRepresentation, APIError>? {
        var sinceRow: Int?
        if let since = query.since {
            guard let index = feed.rowIndex(waiting: waiting) else { return nil }
            guard let row = index.row(of: since) else { return .failure(unknownSince) }
            sinceRow = row
        }
        let rows = query.rows(after: sinceRow, of: feed.rowCount)
        guard rows == 0..<feed.rowCount else {
            // A slice is made per request and sent as JSON only: it is small next to the feed it saves.
            return .success(FeedRepresentation(identity: feed.rows(rows)))
        }
        guard prefersGzip(request.headers) else { return .success(feed.identity) }
        return feed.gzipped(waiting: waiting).map { .success($0) }
    }

    /// Whether to send gzip: the client accepts it (q > 0) and, if it weighs `identity` (by name or `*`),
    /// weighs gzip at least as high. No `Accept-Encoding` at all gets the plain body, as most servers do.
    static func prefersGzip(_ headers: HTTPHeaders) -> Bool {
        let values = headers.values("Accept-Encoding")
        guard !values.isEmpty else { return false }
        let accepted = AcceptEncoding(fieldValues: values)
        let gzip = accepted.quality(of: "gzip")
        let weighsIdentity = accepted.entries.contains { $0.coding == "identity" || $0.coding == "*" }
        return gzip > 0 && (!weighsIdentity || gzip >= accepted.quality(of: "identity"))
    }
}
