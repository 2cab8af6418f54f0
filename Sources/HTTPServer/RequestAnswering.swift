import Dispatch
import HTTPCore

extension ConnectionEnvironment {
    /// 503 for a request that found every handler thread taken for too long, or the queue full.
    static let busy = HTTPResponse.error(
        .serviceUnavailable, "server busy", headers: HTTPHeaders([("Retry-After", "1")]))

    /// Plans `request`: a response that is ready now is returned. Otherwise the work starts (on a handler thread
    /// for a blocking plan, answered `busy` when no thread took it in time; wherever deferred work runs), and its
    /// response reaches `connection.answered` later, on the connection's queue: never from inside this call, so
    /// the connection is never re-entered.
    func answer(_ request: HTTPRequest, ticket: RequestTicket, for connection: Connection) -> HTTPResponse? {
        switch handler.plan(request) {
        case .ready(let response):
            return response
        case .blocking(let work):
            let queue = connection.queue
            let accepted = handlers.submit(
                run: {
                    let response = work()
                    queue.async { connection.answered(response, for: ticket) }
                },
                expire: { queue.async { connection.answered(Self.busy, for: ticket) } })
            return accepted ? nil : Self.busy
        case .deferred(let start):
            let queue = connection.queue
            start { response in queue.async { connection.answered(response, for: ticket) } }
            return nil
        }
    }
}
