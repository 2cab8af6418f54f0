import HTTPCore

/// Routes requests to the chatt endpoints of API.md. Blocking: repository calls run on the caller's thread.
public struct ChattRouter: Sendable {
    private let endpoints: ChattEndpoints

    /// The `/getmaps` and `/getchatts` cache; whoever learns of changes to the store calls its `invalidate()`.
    public var feedCache: ChattFeedCache { endpoints.cache }

    /// A router over `repository`; `metrics` renders `GET /metrics` (404 when nil).
    public init(
        repository: any ChattRepository, serverName: String = "chatterd", metrics: (@Sendable () -> String)? = nil,
        feedCache: ChattFeedCache = ChattFeedCache()
    ) {
        endpoints = ChattEndpoints(
            repository: repository, rootBody: JSONString.encode(serverName), metrics: metrics, cache: feedCache)
    }

    /// The response to `request` when it can be made at once without blocking, else nil (then call
    /// `respond(to:)` where blocking is fine). Answers routes that never reach the repository, errors decided
    /// from the path, method or query alone, and feeds served from a current cache; so these stay fast even
    /// while every handler thread waits on a slow database.
    public func respondImmediately(to request: HTTPRequest) -> HTTPResponse? {
        guard let route = ChattRoute(path: request.path) else { return respond(to: request) }
        let method = request.method == .HEAD ? .GET : request.method
        guard method == route.method else { return respond(to: request) }
        switch route {
        case .getMaps: return endpoints.feedImmediately(.maps, request)
        case .getChatts: return endpoints.feedImmediately(.chatts, request)
        case .postMaps, .postChatt, .readyz: return nil
        case .root, .healthz, .metrics: return respond(to: request)
        }
    }

    /// The response to `request`. HEAD gets the GET response; the server leaves out its body.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        guard let route = ChattRoute(path: request.path), route != .metrics || endpoints.metrics != nil else {
            return APIError.notFound.response
        }
        let method = request.method == .HEAD ? .GET : request.method
        guard method == route.method else {
            return APIError.methodNotAllowed(allow: route.allow).response
        }
        switch route {
        case .root: return endpoints.root()
        case .postMaps: return endpoints.post(request.body, acceptingGeodata: true)
        case .getMaps: return endpoints.feed(.maps, request)
        case .postChatt: return endpoints.post(request.body, acceptingGeodata: false)
        case .getChatts: return endpoints.feed(.chatts, request)
        case .healthz: return endpoints.healthz()
        case .readyz: return endpoints.readyz()
        case .metrics: return endpoints.metricsText()
        }
    }
}
