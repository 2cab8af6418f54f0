import CLibPQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PGConnection {
    /// Waits up to `timeoutMilliseconds` for the server to send something and returns how many `NOTIFY`
    /// messages have arrived since the last call (0 when the wait ran out).
    /// - Throws: `.connectionLost` when the connection broke or the server said it is closing it.
    func awaitNotifications(timeoutMilliseconds: Int32) throws(StoreError) -> Int {
        // Notifications may already be buffered, read along with the result of the previous statement.
        var count = takeNotifications()
        if count == 0 {
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            // A broken connection has no socket (-1), which poll ignores: the check below catches it.
            if poll(&descriptor, 1, timeoutMilliseconds) > 0, PQconsumeInput(handle) == 0 {
                throw StoreError(.connectionLost)
            }
            count = takeNotifications()
        }
        // A backend being terminated says FATAL (seen by the notice receiver) before it hangs up.
        guard isReusable else { throw StoreError(.connectionLost) }
        return count
    }

    /// Parses what has been read and frees every pending notification, counting them.
    private func takeNotifications() -> Int {
        var count = 0
        while let notification = PQnotifies(handle) {
            PQfreemem(notification)
            count += 1
        }
        return count
    }
}
