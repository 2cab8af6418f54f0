import Dispatch
import HTTPCore

extension ConnectionEnvironment {
    /// Plans `request`: a response that is ready now is returned. Otherwise the deferred work starts (wherever it
    /// runs), and its response reaches `connection.answered` later, on the connection's queue: never from inside
    /// this call, so the connection is never re-entered.
    func answer(_ request: HTTPRequest, ticket: RequestTicket, for connection: Connection) -> HTTPResponse? {
        switch handler.plan(request) {
        case .ready(let response):
            return response
        case .deferred(let start):
            let queue = connection.queue
            start { response in queue.async { connection.answered(response, for: ticket) } }
            return nil
        }
    }
}
