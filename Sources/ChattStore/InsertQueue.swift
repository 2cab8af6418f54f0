/// The inserts waiting for a batch, oldest first, each with the moment it gives up. Pure: the batcher supplies
/// the clock, so tests can too.
struct InsertQueue<Element> {
    /// The most inserts that may wait at once; past it the batcher refuses at once rather than queue without end.
    let capacity: Int
    private var entries: [(element: Element, deadline: ContinuousClock.Instant)] = []

    init(capacity: Int) {
        precondition(capacity > 0, "a queue holds at least one insert")
        self.capacity = capacity
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// When the oldest waiting insert gives up; nil when none waits. Deadlines grow with the queue (every insert
    /// waits as long), so the oldest one's is the soonest.
    var nextDeadline: ContinuousClock.Instant? { entries.first?.deadline }

    /// Queues `element` until `deadline`; false (and nothing queued) when the queue is full.
    mutating func append(_ element: Element, deadline: ContinuousClock.Instant) -> Bool {
        guard entries.count < capacity else { return false }
        entries.append((element, deadline))
        return true
    }

    /// The oldest `limit` inserts, removed.
    mutating func take(_ limit: Int) -> [Element] {
        let taken = entries.prefix(limit).map(\.element)
        entries.removeFirst(taken.count)
        return taken
    }

    /// The inserts whose deadline is at or before `now`, removed.
    mutating func removeOverdue(at now: ContinuousClock.Instant) -> [Element] {
        let overdue = entries.prefix { $0.deadline <= now }.map(\.element)
        entries.removeFirst(overdue.count)
        return overdue
    }

    /// Every waiting insert, removed.
    mutating func removeAll() -> [Element] {
        take(entries.count)
    }
}

extension InsertQueue: Sendable where Element: Sendable {}
