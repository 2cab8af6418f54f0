import Dispatch
import HTTPCore

extension Connection {
    /// When the current state times out; see ConnectionTimeouts.
    private var deadline: DispatchTime {
        switch state {
        case .handshaking:
            return acceptedAt + timeouts.handshakeSeconds
        case .reading:
            if decoder.isReadingBody { return lastProgressAt + timeouts.bodyIdleSeconds }
            if let requestStartedAt { return requestStartedAt + timeouts.headerSeconds }
            // A new connection gets the header deadline for its first byte, not the keep-alive allowance.
            if requestsServed == 0 { return lastProgressAt + timeouts.headerSeconds }
            return lastProgressAt + timeouts.keepAliveIdleSeconds
        case .processing, .closed:
            return .distantFuture
        case .writing:
            return lastProgressAt + timeouts.sendIdleSeconds
        case .lingering:
            return lastProgressAt + timeouts.lingerSeconds
        }
    }

    /// Re-arms the timer if the deadline moved earlier; later deadlines are found when it fires.
    func updateDeadline() {
        let next = deadline
        guard next < scheduledDeadline else { return }
        scheduledDeadline = next
        timer?.schedule(deadline: next, leeway: .milliseconds(100))
    }

    func timerFired() {
        scheduledDeadline = .distantFuture
        let due = deadline
        guard due <= .now() else {
            updateDeadline()
            return
        }
        switch state {
        case .reading where decoder.isMidRequest:
            sendFinal(.error(.requestTimeout, "request timed out"))
        case .closed, .processing:
            break
        default:
            close()
        }
    }
}
