import ChattFeed
import ChattModel
import ChattStream
import HTTPCore
import TaskExecution
import Viewport

/// `GET /getmaps/stream` and `GET /getchatts/stream` (docs/API.md): the feed's new chatts as server-sent events,
/// from the position in `Last-Event-ID` on, or from now; on the maps stream, with `?bbox=`, only those in a box.
struct StreamEndpoint: Sendable {
    let hub: ChattStreamHub
    let patience: Duration
    let executor: DispatchTaskExecutor

    static let headers = HTTPHeaders([
        ("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"),
        // A proxy that buffers responses (nginx does by default) would hold events back.
        ("X-Accel-Buffering", "no"),
    ])

    /// Where a request resumes from: nil without `Last-Event-ID` (or with an empty one, which a client sends for
    /// "no event yet"); a position of the log before ticks is one the stream cannot go on from (its client gets
    /// the reset event); anything else malformed, or a repeated header, is the request's error.
    static func resumePosition(of request: HTTPRequest) throws(APIError) -> StreamResume? {
        let values = request.headers.values("Last-Event-ID")
        guard values.count <= 1 else { throw .badRequest("repeated Last-Event-ID") }
        guard let value = values.first, !value.isEmpty else { return nil }
        if let position = LogPosition(text: value) { return .position(position) }
        guard LogPosition.isFromBeforeTicks(value) else { throw .badRequest("malformed Last-Event-ID") }
        return .fromBeforeTicks
    }

    /// The box of a maps stream's `?bbox=` (nil: none, or the chatts stream, which has no locations).
    ///
    /// - Throws: 400 for a malformed box, or one given twice.
    static func box(of request: HTTPRequest, _ kind: ChattFeed.Kind) throws(APIError) -> BoundingBox? {
        guard kind == .maps else { return nil }
        var box: BoundingBox?
        for (name, value) in QueryParameters.pairs(of: request.query) where name == "bbox" {
            guard box == nil, let parsed = QueryParameters.box(value) else { throw FeedQuery.badBox }
            box = parsed
        }
        return box
    }

    func plan(_ kind: ChattFeed.Kind, _ request: HTTPRequest) -> ResponsePlan {
        let position: StreamResume?
        let box: BoundingBox?
        do {
            position = try Self.resumePosition(of: request)
            box = try Self.box(of: request, kind)
        } catch {
            return .ready(error.response)
        }
        let deadline = ContinuousClock.now + patience
        return .deferred { [hub, executor] respond in
            Task(executorPreference: executor) {
                do throws(RepositoryError) {
                    let subscription = try await hub.subscribe(kind, in: box, after: position, before: deadline)
                    var response = HTTPResponse(status: .ok, headers: Self.headers)
                    response.stream = subscription
                    respond(response)
                } catch {
                    respond(APIError(error).response)
                }
            }
        }
    }
}
