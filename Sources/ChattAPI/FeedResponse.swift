import ChattFeed
import ChattModel
import HTTPCore
import Viewport

/// Answers a feed request from an encoded feed: picks the gzip or identity representation, cuts a
/// `since`/`limit`/`newest` slice or the rows in a `bbox`, and answers 304 when the client's `If-None-Match` names
/// what it would get.
enum FeedResponse {
    /// 404 for a `since` id the feed does not hold (README "Incremental feeds" says why 404).
    static let unknownSince = APIError(.notFound, "since names no chatt in the feed")
    /// Names the position of the change log the whole feed an answer (or slice) was cut from shows: where a live
    /// stream subscription resumes from (`Last-Event-ID`).
    static let positionHeader = "Feed-Position"

    /// The whole feed in the representation `request` prefers, or nil when that needs something not made yet (the
    /// gzip body is made on first demand). Never blocks.
    static func readyWholeFeed(for request: HTTPRequest, from feed: EncodedFeed) -> HTTPResponse? {
        let representation = prefersGzip(request.headers) ? feed.gzippedIfReady : feed.identity
        return representation.map { response(to: request, with: $0, at: feed.position) }
    }

    /// Where a removed chatt stood in feed order (nil: no chatt with that id was removed), or why the store could not
    /// say.
    typealias RemovedPlace = @Sendable (ChattID) async -> Result<FeedPosition?, RepositoryError>

    /// The ids of a box's chatts as the store finds them (`StoreBoxSearch`, its deadline given).
    typealias BoxSearch = @Sendable (_ box: BoundingBox, _ limit: Int, _ newest: Bool) async
        -> Result<[String], RepositoryError>

    /// The response to `request` with `query`, making whatever it needs (the gzip body, the row index, a slice).
    /// A `since` id the feed does not hold is asked of `removedPlace`: the chatts after a removed one are those
    /// after its place. A box is searched in the feed's viewport index, or asked of `boxSearch` when given.
    /// Suspends while another request makes the same gzip body, or the store is asked; the rest is work for the
    /// calling thread.
    static func make(
        for request: HTTPRequest, query: FeedQuery, from feed: EncodedFeed,
        removedPlace: RemovedPlace = { _ in .success(nil) }, boxSearch: BoxSearch? = nil
    ) async -> HTTPResponse {
        var sinceRow: Int?
        if let since = query.since {
            let index = feed.rowIndex()
            if let row = index.row(of: since) {
                sinceRow = row
            } else {
                switch await removedPlace(since) {
                case .success(let place?): sinceRow = index.firstRow(after: place) - 1
                case .success(nil): return unknownSince.response
                case .failure(let error): return APIError(error).response
                }
            }
        }
        if let box = query.box {
            let from = sinceRow.map { $0 + 1 } ?? 0
            let rows: [Int]
            if let boxSearch {
                // The comparator: the store's limit comes before `since`, which bench/viewport.sh does not send.
                switch await boxSearch(box, query.mostRows, query.newest != nil) {
                case .success(let ids):
                    let index = feed.rowIndex()
                    rows = ids.compactMap { ChattID(Substring($0)).flatMap(index.row(of:)) }.filter { $0 >= from }
                        .sorted()
                case .failure(let error):
                    return APIError(error).response
                }
            } else {
                rows = feed.rows(in: box, from: from, limit: query.mostRows, newest: query.newest != nil)
            }
            // One copy of the rows' bytes, which the tag and gzip then read whole, not in a thousand slices.
            let identity = FeedRepresentation(identity: HTTPBody(feed.body(ofRows: rows).bytes))
            let representation = prefersGzip(request.headers) ? identity.gzipped() : identity
            return response(to: request, with: representation, at: feed.position)
        }
        let rows = query.rows(after: sinceRow, of: feed.rowCount)
        let representation: FeedRepresentation
        if rows != 0..<feed.rowCount {
            // A slice is tagged per request and sent as JSON only; its bytes are the feed's own.
            representation = FeedRepresentation(identity: feed.rows(rows))
        } else {
            representation = prefersGzip(request.headers) ? await feed.gzipped() : feed.identity
        }
        return response(to: request, with: representation, at: feed.position)
    }

    /// The GeoJSON clusters of `query`'s box at its zoom, from `feed`: tagged, gzipped when preferred, 304 when
    /// the client's `If-None-Match` names them. The whole map's are made once a version for every client.
    static func clusters(for request: HTTPRequest, query: ClusterQuery, from feed: EncodedFeed) async -> HTTPResponse {
        let gzip = prefersGzip(request.headers)
        let representation: FeedRepresentation
        if query.box == .wholeMap {
            let answer = await feed.wholeMapClusters(on: query.grid)
            representation = gzip ? answer.gzip : answer.identity
        } else {
            let body = feed.clusters(in: query.box, on: query.grid)
            let identity = FeedRepresentation(identity: HTTPBody(body), contentType: FeedRepresentation.geoJSON)
            representation = gzip ? identity.gzipped() : identity
        }
        return response(to: request, with: representation, at: feed.position)
    }

    /// 200 with `representation`, or 304 when the client's `If-None-Match` names it. A 304 keeps the body so
    /// that Content-Length names the 200's length (the server does not send it), and every header of the 200
    /// (docs/API.md asks for Content-Type on every response); `Feed-Position` too, as it may have moved under
    /// the same bytes (an edit that changed nothing shown).
    private static func response(
        to request: HTTPRequest, with representation: FeedRepresentation, at position: LogPosition
    ) -> HTTPResponse {
        let condition = EntityTagCondition(fieldValues: request.headers.values("If-None-Match"))
        let status: HTTPStatus = condition?.matches(representation.etag) == true ? .notModified : .ok
        var headers = representation.headers
        headers.add(positionHeader, position.description)
        return HTTPResponse(status: status, headers: headers, body: representation.body)
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
