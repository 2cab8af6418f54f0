import ChattAPI
import HTTPCore

extension ChattRouter {
    /// The response to `request`, with any blocking work run on the calling thread, as a handler thread runs it.
    func respond(to request: HTTPRequest) -> HTTPResponse {
        switch plan(for: request) {
        case .ready(let response): response
        case .blocking(let work): work()
        }
    }

    /// The response when it is ready at once (the server sends it from the I/O queue), else nil.
    func respondImmediately(to request: HTTPRequest) -> HTTPResponse? {
        guard case .ready(let response) = plan(for: request) else { return nil }
        return response
    }
}
