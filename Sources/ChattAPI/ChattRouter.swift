import ChattFeed
import ChattModel
import ChattStream
import HTTPCore
import JSON
import TaskExecution

/// Routes requests to the chatt endpoints of docs/API.md, once per request, and says how each is answered.
public struct ChattRouter: Sendable {
    private let endpoints: ChattEndpoints
    /// Posts allowed per client (see `ClientGroup`); nil for no limit.
    private let postLimit: PostRateLimiter?
    /// The feed streams; nil answers them 404.
    private let streams: StreamEndpoint?
    /// `GET /map` and its files.
    private let mapPage: MapPage
    /// `DELETE /chatts/<id>`.
    private let moderation: ModerationEndpoint

    /// The feeds the routes read and post through; whoever learns of changes to the store tells them.
    public var feed: ChattFeed { endpoints.feed }

    /// The longest a request waits for the store by default: the pool's 2 s wait for a connection and its 5 s
    /// statement timeout.
    public static let defaultPatience = Duration.seconds(7)

    /// A router over `feed` and its repository; `metrics` renders `GET /metrics` (404 when nil); `postLimit` refuses
    /// posts past a client's rate with 429; `staleFeedServed` is told of each stale feed served (see
    /// `ChattFeed.answer`); a request that waits on the store longer than `patience` gets 503 (or a stale feed);
    /// requests that wait on the store run as tasks on `executor`; `mapPage` serves `/map` (503 without Leaflet by
    /// default); `moderators` gives the tokens in force for removals (nil: no token file, every removal is 403);
    /// `boxSearch` replaces the viewport index for `?bbox=` (the benchmark's comparator only).
    public init(
        feed: ChattFeed, serverName: String = "chatterd", metrics: (@Sendable () -> String)? = nil,
        postLimit: PostRateLimiter? = nil, mapPage: MapPage = .unavailable,
        staleFeedServed: @escaping @Sendable (HTTPRequest, StaleFeed) -> Void = { _, _ in },
        patience: Duration = defaultPatience, executor: DispatchTaskExecutor = .shared, streams: ChattStreamHub? = nil,
        moderators: (@Sendable () -> AdminTokens)? = nil, boxSearch: StoreBoxSearch? = nil
    ) {
        self.postLimit = postLimit
        self.streams = streams.map { StreamEndpoint(hub: $0, patience: patience, executor: executor) }
        self.mapPage = mapPage
        let repository = feed.repository
        moderation = ModerationEndpoint(
            tokens: moderators, repository: repository, patience: patience, executor: executor)
        let readiness = ReadinessCheck { deadline in
            do throws(RepositoryError) {
                return .success(try await repository.ping(before: deadline))
            } catch {
                return .failure(error)
            }
        }
        endpoints = ChattEndpoints(
            feed: feed, rootBody: JSONString.encode(serverName), metrics: metrics, staleFeedServed: staleFeedServed,
            patience: patience, executor: executor, readiness: readiness, boxSearch: boxSearch)
    }

    /// How to answer `request`. Routes that never reach the repository, errors decided from the path, method or
    /// query alone, and feeds served from a current cache are ready at once; valid posts are deferred to the
    /// store, which writes them on its own queues, and reads that need the store are deferred to a task that
    /// suspends while it waits. HEAD is answered as GET (the server leaves out the body). Every response names its
    /// route (each of the map page's files is its own).
    public func plan(for request: HTTPRequest) -> ResponsePlan {
        if let id = ModerationEndpoint.idText(of: request.path) {
            return moderation.plan(request, id: id).routed(ModerationEndpoint.route)
        }
        guard let route = ChattRoute(path: request.path), route != .metrics || endpoints.metrics != nil,
            streams != nil || (route != .streamMaps && route != .streamChatts)
        else {
            return .ready(mapPage.assetResponse(to: request) ?? APIError.notFound.response)
        }
        let method = request.method == .HEAD ? .GET : request.method
        guard method == route.method else {
            return .ready(APIError.methodNotAllowed(allow: route.allow).response.routed(route.rawValue))
        }
        switch route {
        case .root: return .ready(endpoints.root().routed(route.rawValue))
        case .healthz: return .ready(endpoints.healthz().routed(route.rawValue))
        case .metrics: return .ready(endpoints.metricsText().routed(route.rawValue))
        case .map: return .ready(mapPage.pageResponse(to: request).routed(route.rawValue))
        case .getMaps: return endpoints.planFeed(.maps, request).routed(route.rawValue)
        case .clusters: return endpoints.planClusters(request).routed(route.rawValue)
        case .getChatts: return endpoints.planFeed(.chatts, request).routed(route.rawValue)
        case .streamMaps, .streamChatts:
            // Only with a hub (the guard above): nil is never reached.
            let kind: ChattFeed.Kind = route == .streamMaps ? .maps : .chatts
            return (streams?.plan(kind, request) ?? .ready(APIError.notFound.response)).routed(route.rawValue)
        case .postMaps, .postChatt:
            if let postLimit, let client = request.clientGroup, let wait = postLimit.admit(client) {
                return .ready(PostRateLimiter.refusal(waiting: wait).routed(route.rawValue))
            }
            let acceptingGeodata = route == .postMaps
            return endpoints.planPost(request.body, acceptingGeodata: acceptingGeodata).routed(route.rawValue)
        case .readyz: return endpoints.planReadyz().routed(route.rawValue)
        }
    }
}

extension ResponsePlan {
    /// The same plan, its response reported under `route`.
    fileprivate func routed(_ route: String) -> ResponsePlan {
        switch self {
        case .ready(let response): .ready(response.routed(route))
        case .deferred(let start): .deferred { respond in start { respond($0.routed(route)) } }
        }
    }
}
