@testable import ChattStore
import Testing

@Suite struct InOrderReleaseTests {
    @Test func itemsFinishedInOrderAreReleasedAtOnce() {
        var order = InOrderRelease<String>()
        let (first, second) = (order.number(), order.number())
        #expect(order.finish(first, "a") == ["a"])
        #expect(order.finish(second, "b") == ["b"])
        #expect(order.pendingCount == 0)
    }

    @Test func anItemFinishedEarlyWaitsForEveryItemBeforeIt() {
        var order = InOrderRelease<String>()
        let numbers = (0..<4).map { _ in order.number() }
        #expect(order.finish(numbers[2], "c") == [])
        #expect(order.finish(numbers[1], "b") == [])
        #expect(order.pendingCount == 4)
        #expect(order.finish(numbers[0], "a") == ["a", "b", "c"])
        #expect(order.pendingCount == 1)
        #expect(order.finish(numbers[3], "d") == ["d"])
    }

    @Test func numbersFollowOneAnother() {
        var order = InOrderRelease<Int>()
        #expect((0..<3).map { _ in order.number() } == [0, 1, 2])
        #expect(order.nextNumber == 3)
    }
}
