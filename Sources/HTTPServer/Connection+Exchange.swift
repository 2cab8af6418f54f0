import Dispatch
import HTTPCore

extension Connection {
    /// `request` with the id it is answered under in its `X-Request-Id`: the client's when acceptable,
    /// else a new one replacing whatever was there. Remembers the id for the response.
    func identified(_ request: HTTPRequest) -> HTTPRequest {
        if let given = request.headers[RequestID.headerName], RequestID.isAcceptable(given) {
            requestID = given
            return request
        }
        var request = request
        requestID = newRequestID()
        request.headers.set(RequestID.headerName, requestID)
        return request
    }

    /// Reports the exchange to the handler's observer and queues the response, echoing the request id.
    /// `request` is nil for a parse error, after which the connection closes.
    func finish(_ request: HTTPRequest?, _ response: HTTPResponse, since started: DispatchTime?) {
        if request == nil { requestID = newRequestID() }
        let seconds = started.map { Double(DispatchTime.now().uptimeNanoseconds - $0.uptimeNanoseconds) / 1e9 } ?? 0
        // A 304's body only sets Content-Length; what goes on the wire is nothing, as for HEAD.
        let sent = response.sendsBody(inAnswerTo: request?.method ?? .GET) ? response.body.count : 0
        environment.handler.observe(HTTPExchange(
            request: request, response: response, bodyBytes: sent,
            seconds: seconds, remoteAddress: remoteAddress, requestID: requestID))
        var response = response
        response.headers.add(RequestID.headerName, requestID)
        if let request {
            send(response, to: request)
        } else {
            sendFinal(response)
        }
    }

    private func newRequestID() -> String {
        RequestID.stem(prefix: environment.requestIDPrefix, connectionID: id) + String(requestsServed + 1)
    }
}
