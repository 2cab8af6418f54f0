import ChattFeed
import ChattModel
import HTTPCore

/// Subscribing: where a client joins the stream, and what its connection pulls.
extension ChattStreamHub {
    /// A subscription for a client that has every chatt up to `after` (nil: starting at the current end). One
    /// the stream cannot go on from gets the reset event. Fails when the store cannot be read by `deadline`.
    public func subscribe(
        _ kind: ChattFeed.Kind, after: CommitPosition?, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> StreamSubscription {
        // A position ahead of the hub (another process, or a feed read newer than the hub's) needs a read first;
        // after one read, the position is one the hub cannot go on from.
        var readFirst = state.withLock { $0.position == nil }
        for _ in 0..<3 {
            if readFirst { try await catchUp(before: deadline) }
            switch state.withLock({ $0.place(after) }) {
            case .at(let serial):
                return StreamSubscription(hub: self, kind: kind, cursor: serial, resetDue: false)
            case .ahead where !readFirst:
                readFirst = true
            case .ahead, .unknown:
                return StreamSubscription(hub: self, kind: kind, cursor: 0, resetDue: true)
            case .behind(let position):
                if let subscription = try await resume(kind, from: position, before: deadline) { return subscription }
                readFirst = true
            }
        }
        return StreamSubscription(hub: self, kind: kind, cursor: 0, resetDue: true)
    }

    /// A subscription for a client behind what the log reaches: the chatts after `position` read from the store
    /// (at most `readLimit` of them, else it is reset), then the log from where that read stopped; nil when the
    /// hub has not reached that point yet, or has gone past what its log keeps.
    private func resume(
        _ kind: ChattFeed.Kind, from position: CommitPosition, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> StreamSubscription? {
        let rows = try await read(position.count, readLimit + 1, deadline)
        guard rows.position.epoch == position.epoch, rows.chatts.count <= readLimit else {
            return StreamSubscription(hub: self, kind: kind, cursor: 0, resetDue: true)
        }
        var backlog: [UInt8] = []
        for row in rows.chatts {
            let at = CommitPosition(epoch: position.epoch, count: row.commit)
            backlog += StreamEvent.chatt(row.chatt, at: at, kind: kind)
        }
        let joined = rows.position
        guard case .at(let serial) = state.withLock({ $0.place(joined) }) else { return nil }
        return StreamSubscription(hub: self, kind: kind, cursor: serial, backlog: HTTPBody(backlog), resetDue: false)
    }

    func register(_ subscription: StreamSubscription, wake: @escaping @Sendable () -> Void) {
        state.withLock { state in
            subscription.wake = wake
            state.subscribers[ObjectIdentifier(subscription)] = subscription
        }
    }

    func unregister(_ subscription: StreamSubscription) {
        state.withLock { state in
            subscription.isEnded = true
            subscription.wake = nil
            state.subscribers[ObjectIdentifier(subscription)] = nil
        }
    }

    func pull(_ subscription: StreamSubscription, limit: Int) -> StreamPull {
        state.withLock { state in
            if subscription.isEnded { return .ended }
            // A probe (the connection cannot take bytes now): only whether the subscriber was cut.
            if limit <= 0 {
                if !subscription.resetDue, subscription.cursor < state.log.firstSerial { subscription.isCut = true }
                return subscription.isCut && !subscription.resetDue ? .cut : .idle
            }
            if subscription.resetDue {
                subscription.isEnded = true
                return .bytes(HTTPBody(StreamEvent.reset))
            }
            if subscription.isCut { return .cut }
            if !subscription.backlog.isEmpty {
                defer { subscription.backlog = HTTPBody() }
                return .bytes(subscription.backlog)
            }
            guard let (body, next) = state.log.read(from: subscription.cursor, subscription.kind, limit: limit) else {
                subscription.isCut = true
                return .cut
            }
            subscription.cursor = next
            guard body.isEmpty else { return .bytes(body) }
            if subscription.cursor == state.log.endSerial { subscription.waiting = true }
            return .idle
        }
    }
}
