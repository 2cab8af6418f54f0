import Dispatch

extension Server {
    /// Graceful shutdown: stop accepting, close idle connections, let requests in flight finish,
    /// force-close what remains at the deadline, then call `completion` (on an internal queue).
    public func shutdown(deadlineSeconds: Double, completion: @escaping @Sendable () -> Void) {
        acceptQueue.async {
            if let source = self.acceptSource {
                // A suspended source never runs its cancel handler (which closes the listener).
                if self.acceptPaused { source.resume() }
                source.cancel()
                self.acceptSource = nil
            }
            for connection in self.registry.withLock({ Array($0.connections.values) }) {
                connection.queue.async { connection.beginDrain() }
            }
            self.waitForConnections(deadline: .now() + deadlineSeconds, forced: false, completion)
        }
    }

    private func waitForConnections(
        deadline: DispatchTime, forced: Bool, _ completion: @escaping @Sendable () -> Void
    ) {
        let remaining = registry.withLock { Array($0.connections.values) }
        if remaining.isEmpty || (forced && .now() >= deadline) {
            handlers.stop()
            completion()
            return
        }
        if !forced && .now() >= deadline {
            for connection in remaining {
                connection.queue.async { connection.close() }
            }
            // Give cancel handlers a moment to close the sockets.
            waitForConnections(deadline: .now() + 1, forced: true, completion)
            return
        }
        acceptQueue.asyncAfter(deadline: .now() + 0.02) {
            self.waitForConnections(deadline: deadline, forced: forced, completion)
        }
    }
}
