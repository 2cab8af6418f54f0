import CLibPQ

extension PGConnection {
    /// Reads what the server has sent, without waiting, and returns the payloads of the `NOTIFY` messages that
    /// have arrived since the last call, oldest first. For a listener's idle connection whose socket is readable.
    /// - Throws: `.connectionLost` when the connection broke or the server said it is closing it.
    func readNotifications() throws(StoreError) -> [String] {
        guard PQconsumeInput(handle) == 1 else { throw StoreError(.connectionLost) }
        let payloads = takeNotifications()
        // A backend being terminated says FATAL (seen by the notice receiver) before it hangs up.
        guard isReusable else { throw StoreError(.connectionLost) }
        return payloads
    }

    /// Parses what has been read and frees every pending notification, keeping its payload.
    func takeNotifications() -> [String] {
        var payloads: [String] = []
        while let notification = PQnotifies(handle) {
            payloads.append(notification.pointee.extra.map { String(cString: $0) } ?? "")
            PQfreemem(notification)
        }
        return payloads
    }
}
