import ChangeLog
import ChattFeed
import ChattModel

// The hub's state as pure steps, run under its lock: where a client joins, and how the log's changes move the
// stream on.

/// Where a client with every event up to a position joins the stream.
enum Placement: Equatable {
    /// At this serial of the log.
    case at(UInt64)
    /// Before what the log holds: its events since are read from the store.
    case behind
    /// Ahead of the hub: the hub may not have caught up with the store yet.
    case ahead
    /// A tick the hub's log holds under another token: not a position of this log.
    case unknown
}

extension ChattStreamHub.State {
    /// Where a client with every event up to `position` (nil: none wanted, it starts at the end) joins.
    func place(_ position: LogPosition?) -> Placement {
        guard let current = self.position else { return .ahead }
        guard let position else { return .at(log.endSerial) }
        if current.tick == position.tick, current.token != position.token { return .unknown }
        if current.precedes(position) { return .ahead }
        if position.precedes(log.coveredFrom) { return .behind }
        return log.serial(after: position).map { .at($0) } ?? .unknown
    }

    /// The log starts over at `start`: every subscriber gets the reset event, and the log holds the recent events
    /// before the start, if the log read them. The subscribers to wake.
    mutating func restart(_ start: LogStart, at now: ContinuousClock.Instant) -> [@Sendable () -> Void] {
        let wakes = position == nil ? [] : resetAll()
        position = start.position
        epoch = start.epoch
        log.restart(from: start.recent?.start ?? start.position)
        if let recent = start.recent { _ = append(recent, at: now) }
        return wakes
    }

    /// Appends the events of `slice` (and a marker for each tick it brings that has none) and moves the stream to
    /// its end; the subscribers to wake.
    mutating func append(_ slice: LogSlice, at now: ContinuousClock.Instant) -> [@Sendable () -> Void] {
        position = slice.end
        // With nobody subscribed, the events are encoded only when someone is (most stretches then never are).
        let deferred = subscribers.isEmpty
        var entries: [EventLog.Entry] = []
        for tick in slice.ticks {
            if tick.isEmpty, tick.tick.tick != slice.start.tick {
                entries.append(.marker(tick.tick.position()))
            }
            for event in tick.events {
                let at = tick.tick.position(through: event.sequence)
                switch event {
                case .posted(let chatt): entries.append(.event(chatt.chatt, at: at, deferred: deferred))
                case .removed(let removal): entries.append(.removal(removal, at: at))
                }
            }
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
        for entry in entries { log.append(entry, idle: subscribers.isEmpty) }
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
