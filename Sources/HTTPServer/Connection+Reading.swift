import Dispatch
import HTTPCore

#if canImport(Glibc)
import Glibc
#endif

extension Connection {
    static let readChunkBytes = 16 * 1024

    /// Reads until the socket is drained or a request is ready, feeding the decoder.
    func readAvailable() {
        var peerClosed = false
        withUnsafeTemporaryAllocation(byteCount: Self.readChunkBytes, alignment: 1) { buffer in
            while state == .reading {
                switch transport.read(into: buffer) {
                case .done(let count):
                    decoder.append(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                    lastProgressAt = .now()
                    if requestStartedAt == nil, decoder.isMidRequest { requestStartedAt = lastProgressAt }
                    processInput()
                case .wantRead:
                    return
                case .wantWrite:
                    resumeWrites()
                    return
                case .closed:
                    peerClosed = true
                    return
                case .failed:
                    close()
                    return
                }
            }
        }
        guard state != .closed else { return }
        if peerClosed {
            // A half-closed client still gets the answer to a request it completed; nothing more.
            if state == .reading { close() } else { closeWhenWritten = true }
            return
        }
        updateDeadline()
    }

    /// Acts on every complete event the decoder has; stops once a request is handed to the handler.
    func processInput() {
        while state == .reading {
            let event: HTTPDecoderEvent?
            do {
                event = try decoder.next()
            } catch {
                respondToParseError(error)
                return
            }
            switch event {
            case nil:
                return
            case .expectContinue:
                output.append(HTTPResponseSerializer.continueHead)
                flush()
            case .request(let request):
                dispatch(identified(request))
            }
        }
    }

    /// Hands `request` to the handler off the I/O queue; the response comes back to this queue.
    private func dispatch(_ request: HTTPRequest) {
        state = .processing
        suspendReads()
        updateDeadline()
        let started = DispatchTime.now()
        let work: @Sendable () -> HTTPResponse
        switch environment.handler.plan(request) {
        case .ready(let response):
            finish(request, response, since: started)
            return
        case .blocking(let blocking):
            work = blocking
        }
        let accepted = environment.handlers.submit(
            run: {
                let response = work()
                self.queue.async { self.finish(request, response, since: started) }
            },
            expire: { self.queue.async { self.sendBusy(to: request, started: started) } })
        if !accepted { sendBusy(to: request, started: started) }
    }

    /// 503 for a request that found every handler thread taken for too long, or the queue full.
    private func sendBusy(to request: HTTPRequest, started: DispatchTime) {
        let response = HTTPResponse.error(
            .serviceUnavailable, "server busy", headers: HTTPHeaders([("Retry-After", "1")]))
        finish(request, response, since: started)
    }

    private func respondToParseError(_ error: HTTPParseError) {
        finish(nil, error.response, since: nil)
    }

    /// Reads and drops whatever the client still sends after the final response, until it closes.
    func discardInput() {
        var scratch = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &scratch, scratch.count, 0)
            if n > 0 { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            if n < 0 && errno == EINTR { continue }
            close()
            return
        }
    }
}
