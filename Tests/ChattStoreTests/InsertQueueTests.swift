import Testing

@testable import ChattStore

// The results are bound before `#expect`, which cannot take a mutating call.
@Suite struct InsertQueueTests {
    private static let start = ContinuousClock.now

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant {
        Self.start + .milliseconds(milliseconds)
    }

    @Test func batchesAreTakenOldestFirstUpToTheLimit() {
        var queue = InsertQueue<Int>(capacity: 10)
        let queued = (0..<5).map { queue.append($0, deadline: at($0)) }
        #expect(queued == Array(repeating: true, count: 5))
        let first = queue.take(3), second = queue.take(3), third = queue.take(3)
        #expect(first == [0, 1, 2])
        #expect(second == [3, 4])
        #expect(third == [])
        #expect(queue.isEmpty)
    }

    @Test func aFullQueueRefusesAndKeepsWhatItHolds() {
        var queue = InsertQueue<Int>(capacity: 2)
        let queued = [1, 2, 3].map { queue.append($0, deadline: at(0)) }
        #expect(queued == [true, true, false])
        #expect(queue.count == 2)
        let all = queue.removeAll()
        #expect(all == [1, 2])
        let again = queue.append(3, deadline: at(0))
        #expect(again, "room again once taken")
    }

    @Test func onlyInsertsPastTheirDeadlineExpireAndTheNextDeadlineFollows() {
        var queue = InsertQueue<String>(capacity: 10)
        #expect(queue.nextDeadline == nil)
        _ = [("a", 100), ("b", 200), ("c", 300)].map { queue.append($0.0, deadline: at($0.1)) }
        #expect(queue.nextDeadline == at(100))
        let early = queue.removeOverdue(at: at(99))
        #expect(early == [])
        let due = queue.removeOverdue(at: at(200))
        #expect(due == ["a", "b"], "a deadline reached is past")
        #expect(queue.nextDeadline == at(300))
        let rest = queue.take(5)
        #expect(rest == ["c"])
        let none = queue.removeOverdue(at: at(1000))
        #expect(none == [])
        #expect(queue.nextDeadline == nil)
    }
}
