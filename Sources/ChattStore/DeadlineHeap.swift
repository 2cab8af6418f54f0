/// Deadlines by key, the soonest first: a binary min-heap with cancellation by key. Pure, so the loop's timer
/// source is a thin shell over it and tests can drive it with made-up instants.
///
/// A cancelled deadline stays in the heap until it reaches the top and is skipped there; store deadlines are
/// seconds away at most, so the heap never holds more than a few seconds' worth.
struct DeadlineHeap<Key: Hashable> {
    private struct Entry {
        let deadline: ContinuousClock.Instant
        let key: Key
        /// Arming order: of two equal deadlines the first armed fires first, and a re-armed key's older
        /// entry is told apart from its live one.
        let serial: Int

        func fires(before other: Entry) -> Bool {
            (deadline, serial) < (other.deadline, other.serial)
        }
    }

    private var heap: [Entry] = []
    /// The serial of each key's live entry.
    private var live: [Key: Int] = [:]
    private var nextSerial = 0

    /// How many deadlines are armed.
    var count: Int { live.count }

    /// The soonest armed deadline, dropping cancelled entries on the way; nil when none is armed.
    mutating func soonest() -> ContinuousClock.Instant? {
        dropCancelledTop()
        return heap.first?.deadline
    }

    /// Arms `key` for `deadline`, replacing what it was armed for.
    mutating func arm(_ key: Key, at deadline: ContinuousClock.Instant) {
        nextSerial += 1
        live[key] = nextSerial
        heap.append(Entry(deadline: deadline, key: key, serial: nextSerial))
        siftUp(heap.count - 1)
    }

    /// Disarms `key`; false when it was not armed.
    @discardableResult
    mutating func cancel(_ key: Key) -> Bool {
        live.removeValue(forKey: key) != nil
    }

    /// The keys due at `now`, soonest first, disarmed.
    mutating func removeDue(at now: ContinuousClock.Instant) -> [Key] {
        var due: [Key] = []
        while dropCancelledTop(), let top = heap.first, top.deadline <= now {
            popTop()
            live.removeValue(forKey: top.key)
            due.append(top.key)
        }
        return due
    }

    /// Pops cancelled or superseded entries off the top; true, for chaining in a condition.
    @discardableResult
    private mutating func dropCancelledTop() -> Bool {
        while let top = heap.first, live[top.key] != top.serial { popTop() }
        return true
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].fires(before: heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            var first = parent
            let left = 2 * parent + 1
            if left < heap.count, heap[left].fires(before: heap[first]) { first = left }
            if left + 1 < heap.count, heap[left + 1].fires(before: heap[first]) { first = left + 1 }
            guard first != parent else { return }
            heap.swapAt(parent, first)
            parent = first
        }
    }
}
