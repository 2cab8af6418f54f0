import Dispatch
import HTTPCore

extension ConnectionEnvironment {
    /// Plans `request` and gives its response to `deliver` on `queue` (which the caller is on): at once when the
    /// plan is ready, else when the deferred work responds.
    func answer(
        _ request: HTTPRequest, on queue: DispatchQueue, _ deliver: @escaping @Sendable (HTTPResponse) -> Void
    ) {
        switch handler.plan(request) {
        case .ready(let response):
            deliver(response)
        case .deferred(let start):
            start { response in queue.async { deliver(response) } }
        }
    }

    /// The request id a new response of connection `connectionID` gets: `sequence` counts from 1 per connection.
    func requestID(connection connectionID: Int, sequence: Int) -> String {
        RequestID.stem(prefix: requestIDPrefix, connectionID: connectionID) + String(sequence)
    }
}
