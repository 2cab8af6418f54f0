import ChattFeed
import ChattModel
import HTTPCore
import TaskExecution

/// The handlers behind each route. Nothing here blocks: a post is handed to the store with a completion, and
/// reads that need the store suspend in a task until it answers or their deadline passes.
struct ChattEndpoints: Sendable {
    /// Where chatts are stored and read.
    let repository: any ChattRepository
    /// `GET /` body: the server name as a JSON string, encoded once.
    let rootBody: [UInt8]
    /// Renders `GET /metrics`; nil when metrics are not served.
    let metrics: (@Sendable () -> String)?
    /// Encoded feeds, shared between requests while the store is unchanged.
    let cache: ChattFeedCache
    /// The feeds served, for a bounded time, while the database cannot be reached.
    let lastGood: LastGoodFeeds
    /// The longest a request waits for the store before it is answered 503 (or with a stale feed).
    let patience: Duration
    /// Where the tasks of requests that wait for the store run.
    let executor: DispatchTaskExecutor
    /// `/readyz`'s database check, shared by every probe within a second.
    let readiness: ReadinessCheck

    private static let emptyObject = Array("{}".utf8)
    private static let healthyBody = Array(#"{"status":"ok"}"#.utf8)
    private static let readyBody = Array(#"{"status":"ready"}"#.utf8)
    private static let unavailableBody = Array(#"{"status":"unavailable"}"#.utf8)
    private static let metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

    /// `GET /`: the server name.
    func root() -> HTTPResponse {
        .json(.ok, rootBody)
    }

    /// `POST /postmaps` (with geodata) and `POST /postchatt` (without): 200 `{}` once stored. Validation is ready
    /// at once; the store writes the chatt on queues of its own and completes it, so a post waits on no thread.
    func planPost(_ body: [UInt8], acceptingGeodata: Bool) -> ResponsePlan {
        let chatt: NewChatt
        do {
            chatt = try ChattValidator.validate(body, acceptingGeodata: acceptingGeodata)
        } catch {
            return .ready(error.response)
        }
        return .deferred { [cache, repository] respond in
            repository.add(chatt) { outcome in
                switch outcome {
                case .success(let batch):
                    // Before the 200: a client that reads after its post must see it (read-your-writes).
                    cache.append(batch)
                    respond(.json(.ok, Self.emptyObject))
                case .failure(let error):
                    // The chatt may be stored even so (a lost connection leaves the outcome unknown); if so, it
                    // was added.
                    cache.chattsAdded()
                    respond(APIError(error).response)
                }
            }
        }
    }

    /// `GET /getmaps` (5-element rows) and `GET /getchatts` (4-element rows): ready at once from a current feed
    /// that needs nothing slow (no database, no compression, no slice), else a task that reads the cache, which
    /// may wait for the store.
    func planFeed(_ kind: ChattFeedCache.Kind, _ request: HTTPRequest) -> ResponsePlan {
        let query: FeedQuery
        do {
            query = try FeedQuery(query: request.query)
        } catch {
            return .ready(error.response)
        }
        // A slice's tag hashes part of the feed: made in the task, it never stalls an I/O queue.
        if query.isWholeFeed, let feed = cache.currentFeed(kind),
            let response = FeedResponse.readyWholeFeed(for: request, from: feed)
        {
            cache.countImmediateHit()
            lastGood.confirm(feed, kind)
            return .ready(response)
        }
        let deadline = ContinuousClock.now + patience
        return .deferred { [cache, repository, executor, lastGood] respond in
            Task(executorPreference: executor) {
                let feed: EncodedFeed
                do throws(RepositoryError) {
                    feed = try await cache.feed(kind, from: repository, before: deadline)
                } catch {
                    let refusal = APIError(error).response
                    guard refusal.status.code >= 500, let (stale, age) = lastGood.fallback(kind) else {
                        return respond(refusal)
                    }
                    var response = await FeedResponse.make(for: request, query: query, from: stale)
                    response.headers.add("Age", String(age))
                    response.cause = refusal.cause
                    return respond(response)
                }
                lastGood.confirm(feed, kind)
                respond(await FeedResponse.make(for: request, query: query, from: feed))
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
