import CLibPQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PGConnection {
    /// Waits up to `timeoutMilliseconds` for the server to send something and returns the payloads of the
    /// `NOTIFY` messages that have arrived since the last call, oldest first (none when the wait ran out).
    /// - Throws: `.connectionLost` when the connection broke or the server said it is closing it.
    func awaitNotifications(timeoutMilliseconds: Int32) throws(StoreError) -> [String] {
        // Notifications may already be buffered, read along with the result of the previous statement.
        var payloads = takeNotifications()
        if payloads.isEmpty {
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            // A broken connection has no socket (-1), which poll ignores: the check below catches it.
            if poll(&descriptor, 1, timeoutMilliseconds) > 0, PQconsumeInput(handle) == 0 {
                throw StoreError(.connectionLost)
            }
            payloads = takeNotifications()
        }
        // A backend being terminated says FATAL (seen by the notice receiver) before it hangs up.
        guard isReusable else { throw StoreError(.connectionLost) }
        return payloads
    }

    /// Parses what has been read and frees every pending notification, keeping its payload.
    private func takeNotifications() -> [String] {
        var payloads: [String] = []
        while let notification = PQnotifies(handle) {
            payloads.append(notification.pointee.extra.map { String(cString: $0) } ?? "")
            PQfreemem(notification)
        }
        return payloads
    }
}
