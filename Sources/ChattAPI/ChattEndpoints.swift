import HTTPCore

/// The handlers behind each route. Repository calls block the calling thread.
struct ChattEndpoints: Sendable {
    let repository: any ChattRepository
    /// `GET /` body: the server name as a JSON string, encoded once.
    let rootBody: [UInt8]
    let metrics: (@Sendable () -> String)?

    private static let emptyObject = Array("{}".utf8)
    private static let healthyBody = Array(#"{"status":"ok"}"#.utf8)
    private static let readyBody = Array(#"{"status":"ready"}"#.utf8)
    private static let unavailableBody = Array(#"{"status":"unavailable"}"#.utf8)
    private static let metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

    func root() -> HTTPResponse {
        .json(.ok, rootBody)
    }

    /// `POST /postmaps` (with geodata) and `POST /postchatt` (without): 200 `{}` once stored.
    func post(_ body: [UInt8], acceptingGeodata: Bool) -> HTTPResponse {
        let chatt: NewChatt
        do {
            chatt = try ChattValidator.validate(body, acceptingGeodata: acceptingGeodata)
        } catch {
            return error.response
        }
        do {
            try repository.add(chatt)
        } catch {
            return APIError(error).response
        }
        return .json(.ok, Self.emptyObject)
    }

    /// `GET /getmaps` (5-element rows) and `GET /getchatts` (4-element rows).
    func rows(includingGeodata: Bool) -> HTTPResponse {
        let chatts: [StoredChatt]
        do {
            chatts = try repository.all()
        } catch {
            return APIError(error).response
        }
        let body = includingGeodata ? ChattRowEncoder.mapsRows(chatts) : ChattRowEncoder.chattsRows(chatts)
        return .json(.ok, body)
    }

    func healthz() -> HTTPResponse {
        .json(.ok, Self.healthyBody)
    }

    /// 200 when the database answers, else 503 with `Retry-After` so load balancers back off.
    func readyz() -> HTTPResponse {
        do {
            try repository.ping()
            return .json(.ok, Self.readyBody)
        } catch {
            var response = HTTPResponse.json(.serviceUnavailable, Self.unavailableBody)
            response.headers.add("Retry-After", "1")
            return response
        }
    }

    /// Prometheus text exposition; the router only calls this when a metrics closure exists.
    func metricsText() -> HTTPResponse {
        let text = metrics?() ?? ""
        return HTTPResponse(
            status: .ok, headers: HTTPHeaders([("Content-Type", Self.metricsContentType)]), body: Array(text.utf8))
    }
}
