import ChattModel
import HTTPCore
import TaskExecution

/// `DELETE /chatts/<id>` (docs/API.md, moderation): a moderator, named by the bearer token presented, removes one
/// chatt for a reason. Refusals are decided in this order, so that nothing about a chatt is told to a client that
/// may not remove it: 403 when no token file is configured, 401 without a listed token, then 400 for the id and the
/// body; the store answers 200, 404 or 503.
struct ModerationEndpoint: Sendable {
    /// The tokens in force (reloaded on SIGHUP by whoever owns the file); nil when no token file is configured.
    let tokens: (@Sendable () -> AdminTokens)?
    let repository: any ChattRepository
    let patience: Duration
    let executor: DispatchTaskExecutor

    /// How its responses are reported: one route for every id.
    static let route = "/chatts/{id}"
    static let allow = "DELETE"

    static let notConfigured = APIError(.forbidden, "moderation is not configured on this server")
    static let unauthorized = APIError(
        .unauthorized, "a moderator's bearer token is required", headers: HTTPHeaders([("WWW-Authenticate", "Bearer")]))
    static let badID = APIError.badRequest("the chatt id must be a UUID")
    static let unknownChatt = APIError(.notFound, "no such chatt")

    private static let prefix = "/chatts/"
    private static let emptyObject = Array("{}".utf8)

    /// The id part of a path this endpoint serves (`/chatts/<id>`, with one trailing slash or none), or nil.
    static func idText(of path: String) -> Substring? {
        guard path.hasPrefix(prefix) else { return nil }
        var id = path.dropFirst(prefix.count)
        if id.hasSuffix("/") { id = id.dropLast() }
        guard !id.isEmpty, !id.contains("/") else { return nil }
        return id
    }

    func plan(_ request: HTTPRequest, id idText: Substring) -> ResponsePlan {
        guard request.method == .DELETE else { return .ready(APIError.methodNotAllowed(allow: Self.allow).response) }
        guard let tokens else { return .ready(Self.notConfigured.response) }
        let presented = request.headers.values("Authorization")
        guard presented.count == 1, let token = AdminTokens.bearerToken(presented[0]),
            let moderator = tokens().moderator(presenting: token)
        else { return .ready(Self.unauthorized.response) }
        guard ChattID(idText) != nil else { return .ready(Self.badID.response) }
        let reason: String
        do {
            reason = try RemovalValidator.reason(of: request.body)
        } catch {
            return .ready(error.response)
        }
        let id = idText.lowercased()
        let deadline = ContinuousClock.now + patience
        return .deferred { [repository, executor] respond in
            Task(executorPreference: executor) {
                do throws(RepositoryError) {
                    let removed = try await repository.remove(id: id, by: moderator, reason: reason, before: deadline)
                    respond(removed ? .json(.ok, Self.emptyObject) : Self.unknownChatt.response)
                } catch {
                    respond(APIError(error).response)
                }
            }
        }
    }
}
