import ChattFeed
import ChattModel
import HTTPCore
import TaskExecution

/// The handlers behind each route. Nothing here blocks: a post is handed to the feed, which stores it and takes it
/// in, with a completion; reads that need the store suspend in a task until it answers or their deadline passes.
struct ChattEndpoints: Sendable {
    /// The feeds, and the store they keep coherent with: posts go through them.
    let feed: ChattFeed
    /// `GET /` body: the server name as a JSON string, encoded once.
    let rootBody: [UInt8]
    /// Renders `GET /metrics`; nil when metrics are not served.
    let metrics: (@Sendable () -> String)?
    /// Told of every stale feed served, before its response goes (the observer logs it).
    let staleFeedServed: @Sendable (HTTPRequest, StaleFeed) -> Void
    /// The longest a request waits for the store before it is answered 503 (or with a stale feed).
    let patience: Duration
    /// Where the tasks of requests that wait for the store run.
    let executor: DispatchTaskExecutor
    /// `/readyz`'s database check, shared by every probe within a second.
    let readiness: ReadinessCheck
    /// Where boxes are searched instead of the viewport index: the benchmark's comparator; nil in production.
    let boxSearch: StoreBoxSearch?

    private static let emptyObject = Array("{}".utf8)
    private static let healthyBody = Array(#"{"status":"ok"}"#.utf8)
    private static let readyBody = Array(#"{"status":"ready"}"#.utf8)
    private static let unavailableBody = Array(#"{"status":"unavailable"}"#.utf8)
    private static let metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

    /// `GET /`: the server name.
    func root() -> HTTPResponse {
        .json(.ok, rootBody)
    }

    /// `POST /postmaps` (with geodata) and `POST /postchatt` (without): 200 `{}` once stored and taken into the
    /// feeds. Validation is ready at once; the store writes the chatt on queues of its own and completes it, so a
    /// post waits on no thread.
    func planPost(_ body: [UInt8], acceptingGeodata: Bool) -> ResponsePlan {
        let chatt: NewChatt
        do {
            chatt = try ChattValidator.validate(body, acceptingGeodata: acceptingGeodata)
        } catch {
            return .ready(error.response)
        }
        return .deferred { [feed] respond in
            feed.add(chatt) { outcome in
                switch outcome {
                case .success: respond(.json(.ok, Self.emptyObject))
                case .failure(let error): respond(APIError(error).response)
                }
            }
        }
    }

    /// `GET /getmaps` (5-element rows) and `GET /getchatts` (4-element rows): ready at once from a current feed
    /// that needs nothing slow (no database, no compression, no slice), else a task that asks the feed, which
    /// may wait for the store.
    func planFeed(_ kind: ChattFeed.Kind, _ request: HTTPRequest) -> ResponsePlan {
        let query: FeedQuery
        do {
            query = try FeedQuery(query: request.query, located: kind == .maps)
        } catch {
            return .ready(error.response)
        }
        // A slice's tag hashes part of the feed: made in the task, it never stalls an I/O queue.
        if query.isWholeFeed,
            let response = feed.readyAnswer(kind, { FeedResponse.readyWholeFeed(for: request, from: $0) })
        {
            return .ready(response)
        }
        return answering(kind, request) { [repository = feed.repository, boxSearch] feed, deadline in
            let removedPlace: FeedResponse.RemovedPlace = { id in
                do throws(RepositoryError) {
                    return .success(try await repository.removedPlace(of: id.description, before: deadline))
                } catch {
                    return .failure(error)
                }
            }
            let searchBox: FeedResponse.BoxSearch? = boxSearch.map { search in
                { @Sendable box, limit, newest in await search(box, limit, newest, deadline) }
            }
            return await FeedResponse.make(
                for: request, query: query, from: feed, removedPlace: removedPlace, boxSearch: searchBox)
        }
    }

    /// `GET /getmaps/clusters`: a task that asks the maps feed (which may wait for the store), then counts the box's
    /// chatts into the zoom's cells.
    func planClusters(_ request: HTTPRequest) -> ResponsePlan {
        let query: ClusterQuery
        do {
            query = try ClusterQuery(query: request.query)
        } catch {
            return .ready(error.response)
        }
        return answering(.maps, request) { feed, _ in
            await FeedResponse.clusters(for: request, query: query, from: feed)
        }
    }

    /// A task that asks the feed of `kind` (which may wait for the store, until the request's patience runs out)
    /// and answers with `make`'s response from it and that deadline; one from the last good feed says its `Age`,
    /// and is reported (`staleFeedServed`).
    private func answering(
        _ kind: ChattFeed.Kind, _ request: HTTPRequest,
        make: @escaping @Sendable (EncodedFeed, ContinuousClock.Instant) async -> HTTPResponse
    ) -> ResponsePlan {
        let deadline = ContinuousClock.now + patience
        return .deferred { [feed, executor, staleFeedServed] respond in
            Task(executorPreference: executor) {
                let answer: FeedAnswer
                do throws(RepositoryError) {
                    answer = try await feed.answer(kind, before: deadline)
                } catch {
                    return respond(APIError(error).response)
                }
                var response = await make(answer.feed, deadline)
                if let stale = answer.stale {
                    response.headers.add("Age", String(stale.age))
                    staleFeedServed(request, stale)
                }
                respond(response)
            }
        }
    }

    /// `GET /healthz`: 200 whenever the process can answer.
    func healthz() -> HTTPResponse {
        .json(.ok, Self.healthyBody)
    }

    /// 200 when the database answers, else 503 with `Retry-After` so load balancers back off.
    func planReadyz() -> ResponsePlan {
        let deadline = ContinuousClock.now + patience
        return .deferred { [readiness, executor] respond in
            Task(executorPreference: executor) {
                switch await readiness.outcome(before: deadline) {
                case .success:
                    respond(.json(.ok, Self.readyBody))
                case .failure(let error):
                    var response = HTTPResponse.json(.serviceUnavailable, Self.unavailableBody)
                    response.headers.add("Retry-After", "1")
                    response.cause = error.detail
                    respond(response)
                }
            }
        }
    }

    /// Prometheus text exposition; the router only calls this when a metrics closure exists.
    func metricsText() -> HTTPResponse {
        let text = metrics?() ?? ""
        return HTTPResponse(
            status: .ok, headers: HTTPHeaders([("Content-Type", Self.metricsContentType)]), body: Array(text.utf8))
    }
}
