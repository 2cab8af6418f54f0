import ChattAPI
import Dispatch
import HTTPCore
import Locking

extension ChattRouter {
    /// The response to `request`, with deferred work waited for.
    func respond(to request: HTTPRequest) -> HTTPResponse {
        switch plan(for: request) {
        case .ready(let response): return response
        case .deferred(let start):
            let response = Locked<HTTPResponse?>(nil)
            let responded = DispatchSemaphore(value: 0)
            start { answer in
                response.withLock { $0 = answer }
                responded.signal()
            }
            responded.wait()
            return response.withLock { $0! }
        }
    }

    /// The response when it is ready at once (the server sends it from the I/O queue), else nil.
    func respondImmediately(to request: HTTPRequest) -> HTTPResponse? {
        guard case .ready(let response) = plan(for: request) else { return nil }
        return response
    }
}
