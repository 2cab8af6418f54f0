import Dispatch
import HTTPCore

#if canImport(Glibc)
import Glibc
#endif

extension Connection {
    /// Queues the response to `request` and starts writing it.
    func send(_ response: HTTPResponse, to request: HTTPRequest) {
        guard state == .processing else { return }
        requestsServed += 1
        let keepAlive = request.keepAlive && !draining && !closeWhenWritten
            && requestsServed < environment.configuration.maxRequestsPerConnection
        closeWhenWritten = !keepAlive
        enqueue(
            response, version: request.version, keepAlive: keepAlive,
            omitBody: !response.sendsBody(inAnswerTo: request.method))
    }

    /// Queues an error response after which the connection closes; no further input is parsed.
    func sendFinal(_ response: HTTPResponse) {
        closeWhenWritten = true
        enqueue(response, version: .http1_1, keepAlive: false, omitBody: false)
    }

    private func enqueue(_ response: HTTPResponse, version: HTTPVersion, keepAlive: Bool, omitBody: Bool) {
        state = .writing
        suspendReads()
        var head = HTTPResponseSerializer.head(
            response, version: version, keepAlive: keepAlive, date: environment.dates.now)
        // Small bodies go out with the head in one write (one TLS record); large ones stay shared.
        if omitBody {
            output.append(head)
        } else if response.body.count <= 16 * 1024 {
            head.append(contentsOf: response.body)
            output.append(head)
        } else {
            output.append(head)
            output.append(response.body)
        }
        lastProgressAt = .now()
        flush()
    }

    /// Writes queued output until done or the socket is full.
    func flush() {
        while !output.isEmpty {
            switch output.writeFirst({ transport.write($0) }) {
            case .done:
                lastProgressAt = .now()
            case .wantWrite, .wantRead:
                resumeWrites()
                updateDeadline()
                return
            case .closed, .failed:
                close()
                return
            }
        }
        suspendWrites()
        if state == .writing { responseWritten() }
    }

    private func responseWritten() {
        if closeWhenWritten {
            startLingering()
            return
        }
        state = .reading
        requestStartedAt = decoder.isMidRequest ? .now() : nil
        lastProgressAt = .now()
        processInput()
        guard state == .reading else { return }
        resumeReads()
        updateDeadline()
        // Bytes already decrypted by TLS do not make the socket readable again.
        if transport.hasBufferedInput { readAvailable() }
    }

    /// Half-closes and drains input for a while, so that unread request bytes do not turn our
    /// final response into a connection reset on the client (RFC 9112 §9.6).
    private func startLingering() {
        transport.shutdown()
        guard Glibc.shutdown(fd, Int32(SHUT_WR)) == 0 else {
            close()
            return
        }
        state = .lingering
        lastProgressAt = .now()
        updateDeadline()
        resumeReads()
    }
}
