import ChattFeed
import ChattModel

// The hub's state as pure steps, run under its lock: where a client joins, and how reads and commits move the
// stream on.

/// Where a client with every chatt up to a position joins the stream.
enum Placement: Equatable {
    /// At this serial of the log.
    case at(UInt64)
    /// Before what the log reaches, in the current epoch: its chatts since are read from the store.
    case behind(CommitPosition)
    /// Ahead of the hub (a newer epoch, or a higher count).
    case ahead
    /// Of an older epoch: it cannot go on.
    case unknown
}

extension ChattStreamHub.State {
    /// Where a client with every chatt up to `position` (nil: none wanted, it starts at the end) joins.
    func place(_ position: CommitPosition?) -> Placement {
        guard let current = self.position else { return .ahead }
        guard let position else { return .at(log.endSerial) }
        if position.epoch != current.epoch { return position.epoch > current.epoch ? .ahead : .unknown }
        if position.count > current.count { return .ahead }
        guard let serial = log.serial(after: position.count) else { return .behind(position) }
        return .at(serial)
    }

    /// Takes in `rows`, read after the hub's count with at most `limit` rows asked: whether more may be waiting,
    /// and the subscribers to wake. A first read sets where the stream stands; a new epoch resets everyone.
    mutating func apply(_ rows: CommittedChatts, limit: Int, at now: ContinuousClock.Instant)
        -> (more: Bool, wakes: [@Sendable () -> Void])
    {
        guard let current = position, current.epoch == rows.position.epoch else {
            let wakes = position == nil ? [] : resetAll()
            position = rows.position
            log.restart(from: rows.position.count)
            return (false, wakes)
        }
        let fresh = rows.chatts.filter { $0.commit > current.count }
        let whole = rows.chatts.count < limit
        let end = whole ? max(current.count, rows.position.count) : fresh.last?.commit ?? current.count
        return (!whole, append(fresh, upTo: CommitPosition(epoch: current.epoch, count: end), at: now))
    }

    /// Appends the events of `chatts` (in commit order) and moves the stream to `position`; the subscribers to
    /// wake.
    mutating func append(
        _ chatts: [SequencedChatt], upTo position: CommitPosition, at now: ContinuousClock.Instant
    ) -> [@Sendable () -> Void] {
        self.position = position
        let entries = chatts.map { row in
            let at = CommitPosition(epoch: position.epoch, count: row.commit)
            return EventLog.Entry(
                count: row.commit, maps: StreamEvent.chatt(row.chatt, at: at, kind: .maps),
                chatts: StreamEvent.chatt(row.chatt, at: at, kind: .chatts))
        }
        return appendEntries(entries, at: now)
    }

    /// Appends `entries` to the log: the waiting subscribers to wake, and those it left behind, cut. Every
    /// subscriber is looked at once for the lot.
    mutating func appendEntries(
        _ entries: [EventLog.Entry], at now: ContinuousClock.Instant
    ) -> [@Sendable () -> Void] {
        guard !entries.isEmpty else { return [] }
        let first = log.firstSerial
        for entry in entries { log.append(entry) }
        lastAppend = now
        var wakes: [@Sendable () -> Void] = []
        for subscription in subscribers.values {
            if log.firstSerial > first, subscription.cursor < log.firstSerial, !subscription.isCut {
                subscription.isCut = true
            } else if !subscription.waiting {
                continue
            }
            subscription.waiting = false
            if let wake = subscription.wake { wakes.append(wake) }
        }
        return wakes
    }

    /// Every subscriber gets the reset event next; the subscribers to wake.
    mutating func resetAll() -> [@Sendable () -> Void] {
        subscribers.values.compactMap { subscription in
            subscription.resetDue = true
            subscription.waiting = false
            return subscription.wake
        }
    }
}
