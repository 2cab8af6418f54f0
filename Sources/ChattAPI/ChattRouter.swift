import HTTPCore

/// Routes requests to the chatt endpoints of API.md. Blocking: repository calls run on the caller's thread.
public struct ChattRouter: Sendable {
    private let endpoints: ChattEndpoints

    /// A router over `repository`; `metrics` renders `GET /metrics` (404 when nil).
    public init(
        repository: any ChattRepository, serverName: String = "chatterd", metrics: (@Sendable () -> String)? = nil
    ) {
        endpoints = ChattEndpoints(repository: repository, rootBody: JSONString.encode(serverName), metrics: metrics)
    }

    /// Whether answering `request` may block on the repository; other requests (health, metrics, errors
    /// decided from the path alone) can be answered without leaving the I/O thread.
    public func mayBlock(_ request: HTTPRequest) -> Bool {
        guard let route = ChattRoute(path: request.path) else { return false }
        let method = request.method == .HEAD ? .GET : request.method
        return route.usesRepository && method == route.method
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
        case .getMaps: return endpoints.rows(includingGeodata: true)
        case .postChatt: return endpoints.post(request.body, acceptingGeodata: false)
        case .getChatts: return endpoints.rows(includingGeodata: false)
        case .healthz: return endpoints.healthz()
        case .readyz: return endpoints.readyz()
        case .metrics: return endpoints.metricsText()
        }
    }
}
