import Dispatch
import HTTPCore

extension ConnectionEnvironment {
    /// 503 for a request that found every handler thread taken for too long, or the queue full.
    static let busy = HTTPResponse.error(
        .serviceUnavailable, "server busy", headers: HTTPHeaders([("Retry-After", "1")]))

    /// Plans `request` and gives its response to `deliver` on `queue` (which the caller is on): at once when the
    /// plan is ready, else after a handler thread ran the blocking work (`busy` when no thread took it in time), or
    /// when deferred work responds.
    func answer(
        _ request: HTTPRequest, on queue: DispatchQueue, _ deliver: @escaping @Sendable (HTTPResponse) -> Void
    ) {
        switch handler.plan(request) {
        case .ready(let response):
            deliver(response)
        case .blocking(let work):
            let accepted = handlers.submit(
                run: {
                    let response = work()
                    queue.async { deliver(response) }
                },
                expire: { queue.async { deliver(Self.busy) } })
            if !accepted { deliver(Self.busy) }
        case .deferred(let start):
            start { response in queue.async { deliver(response) } }
        }
    }

    /// The request id a new response of connection `connectionID` gets: `sequence` counts from 1 per connection.
    func requestID(connection connectionID: Int, sequence: Int) -> String {
        RequestID.stem(prefix: requestIDPrefix, connectionID: connectionID) + String(sequence)
    }
}
