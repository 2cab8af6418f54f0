@testable import ChattStore
import Testing

@Suite struct DeadlineHeapTests {
    private static let start = ContinuousClock.now
    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { Self.start + .milliseconds(milliseconds) }

    @Test func dueKeysComeOutSoonestFirstAndEqualDeadlinesInArmingOrder() {
        var heap = DeadlineHeap<String>()
        for (key, time) in [("c", 30), ("a", 10), ("d", 30), ("b", 20), ("e", 50)] { heap.arm(key, at: at(time)) }
        #expect(heap.soonest() == at(10))
        #expect(heap.removeDue(at: at(30)) == ["a", "b", "c", "d"])
        #expect(heap.soonest() == at(50))
        #expect(heap.count == 1)
    }

    @Test func aCancelledKeyNeverComesDue() {
        var heap = DeadlineHeap<Int>()
        heap.arm(1, at: at(10))
        heap.arm(2, at: at(20))
        let (first, second) = (heap.cancel(1), heap.cancel(1))
        #expect(first && !second)
        #expect(heap.soonest() == at(20))
        #expect(heap.removeDue(at: at(100)) == [2])
        #expect(heap.soonest() == nil)
    }

    @Test func reArmingAKeyMovesItsDeadline() {
        var heap = DeadlineHeap<Int>()
        heap.arm(1, at: at(10))
        heap.arm(1, at: at(40))
        #expect(heap.removeDue(at: at(20)) == [])
        #expect(heap.removeDue(at: at(40)) == [1])
    }

    @Test func manyDeadlinesComeOutSorted() {
        var heap = DeadlineHeap<Int>()
        let times = (0..<200).map { ($0 * 7919) % 1000 }
        for (key, time) in times.enumerated() { heap.arm(key, at: at(time)) }
        let due = heap.removeDue(at: at(1000))
        #expect(due.map { times[$0] } == times.sorted())
        #expect(heap.count == 0)
    }
}
