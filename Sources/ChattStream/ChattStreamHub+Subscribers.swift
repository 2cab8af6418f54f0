import ChangeLog
import ChattFeed
import ChattModel
import HTTPCore
import Viewport

/// Subscribing: where a client joins the stream, and what its connection pulls.
extension ChattStreamHub {
    /// A subscription for a client that holds every event up to `after` (nil: starting at the current end), of the
    /// events in `box` alone when one is given. One the stream cannot go on from (a position of another log or
    /// epoch, or too far behind) gets the reset event. Fails when the store cannot be read by `deadline`.
    public func subscribe(
        _ kind: ChattFeed.Kind, in box: BoundingBox? = nil, after: StreamResume?,
        before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> StreamSubscription {
        let position: LogPosition?
        switch after {
        case nil: position = nil
        case .position(let resume): position = resume
        case .fromBeforeTicks: return resetSubscription(kind)
        }
        // The log read at least once, and up to every tick announced: a process nobody used may have left them.
        _ = try await changes.caughtUp(before: deadline)
        var synced = false
        while true {
            switch state.withLock({ $0.place(position) }) {
            case .at(let serial):
                return StreamSubscription(hub: self, kind: kind, box: box, cursor: serial, resetDue: false)
            case .ahead where !synced:
                // Ahead of the hub (a feed read on another process, say): once caught up with the store, the
                // position is one the hub can go on from, or none of this log.
                _ = try await changes.synced(before: deadline)
                synced = true
            case .ahead, .unknown:
                return resetSubscription(kind)
            case .behind:
                // Invariant: a client placed behind the log has a position.
                return try await resume(kind, in: box, from: position!, before: deadline)
            }
        }
    }

    private func resetSubscription(_ kind: ChattFeed.Kind) -> StreamSubscription {
        StreamSubscription(hub: self, kind: kind, cursor: 0, resetDue: true)
    }

    /// A subscription for a client behind what the log holds: its events after `position` read from the store (at
    /// most `readLimit` of them, else it is reset), then the log from where that read meets it.
    private func resume(
        _ kind: ChattFeed.Kind, in box: BoundingBox?, from position: LogPosition,
        before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> StreamSubscription {
        let read = try await read(position, readLimit + 1, deadline)
        let epoch = state.withLock { $0.epoch }
        // Invariant: a read whose first tick is the position's has an end.
        guard let first = read.ticks.first, first.tick.isTick(of: position), !read.isCut, let end = read.end,
            read.ticks.allSatisfy({ $0.tick.epoch == epoch }), read.ticks.eventCount <= readLimit
        else { return resetSubscription(kind) }
        return state.withLock { state in
            // The read reaches at least where the hub stood before it; the hub may have moved on since.
            guard let current = state.position else { return resetSubscription(kind) }
            let meetsLog = !current.precedes(end)
            let cursor = meetsLog ? state.log.serial(after: end) : state.log.endSerial
            guard let cursor else { return resetSubscription(kind) }
            var backlog: [UInt8] = []
            for (at, event) in read.ticks.events where meetsLog || current.holds(tick: at.tick, seq: at.seq) {
                guard StreamPlace(of: event).isShown(in: box) else { continue }
                backlog += StreamEvent.event(event, at: at, kind: kind)
            }
            return StreamSubscription(
                hub: self, kind: kind, box: box, cursor: cursor, backlog: HTTPBody(backlog), resetDue: false)
        }
    }

    func register(_ subscription: StreamSubscription, wake: @escaping @Sendable () -> Void) {
        state.withLock { state in
            subscription.wake = wake
            state.subscribers[ObjectIdentifier(subscription)] = subscription
            state.log.encodeAll()
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
                subscription.lastSent = now()
                return .bytes(subscription.backlog)
            }
            let box = subscription.box
            guard let read = state.log.read(from: subscription.cursor, subscription.kind, limit: limit, in: box) else {
                subscription.isCut = true
                return .cut
            }
            subscription.cursor = read.next
            if subscription.box != nil, let keepAlive = keepAlive(subscription, after: read) {
                return .bytes(keepAlive)
            }
            guard read.body.isEmpty else { return .bytes(read.body) }
            if subscription.cursor == state.log.endSerial { subscription.waiting = true }
            return .idle
        }
    }

    /// What a subscriber filtered by a box is sent instead of `read`'s bytes, if anything: where the stream stands
    /// (an event with an `id:` and no data) when it read past events outside its box and is owed a keep-alive (by
    /// `tick`, or a heartbeat of the log's), or a heartbeat when it is owed one and has nothing to send. Notes what
    /// was sent.
    private func keepAlive(_ subscription: StreamSubscription, after read: EventLog.Read) -> HTTPBody? {
        if let passed = read.passed {
            subscription.passed = passed
        } else if read.sentEvent {
            subscription.passed = nil
        }
        let owed = read.body.isEmpty ? subscription.keepAliveDue : !read.sentEvent
        if !read.body.isEmpty || owed {
            subscription.lastSent = now()
            subscription.keepAliveDue = false
        }
        guard owed else { return nil }
        guard let passed = subscription.passed else { return read.body.isEmpty ? HTTPBody(StreamEvent.heartbeat) : nil }
        subscription.passed = nil
        return HTTPBody(StreamEvent.position(passed))
    }
}
