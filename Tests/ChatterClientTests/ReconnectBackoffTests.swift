@testable import ChatterClient
import Testing

/// A generator that always gives `value`: 0 draws the bottom of each range, `.max` the top.
struct FixedRandom: RandomNumberGenerator {
    var value: UInt64
    mutating func next() -> UInt64 { value }
}

@Suite struct ReconnectBackoffTests {
    @Test func ceilingsDoubleFromHalfASecondUpToTheCap() {
        var backoff = ReconnectBackoff()
        var top = FixedRandom(value: .max)
        var ceilings: [Double] = []
        for _ in 0..<10 {
            ceilings.append(backoff.ceilingSeconds)
            let wait = backoff.next(using: &top)
            #expect(wait <= ceilings.last! && wait > ceilings.last! * 0.99, "the draw reaches the ceiling")
        }
        #expect(ceilings == [0.5, 1, 2, 4, 8, 16, 30, 30, 30, 30])
    }

    @Test func fullJitterCanDrawZero() {
        var backoff = ReconnectBackoff()
        var bottom = FixedRandom(value: 0)
        #expect((0..<5).map { _ in backoff.next(using: &bottom) } == [0, 0, 0, 0, 0])
        #expect(backoff.attempts == 5, "a zero wait still counts as a step")
    }

    @Test func drawsStayWithinTheCeiling() {
        var backoff = ReconnectBackoff()
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let ceiling = backoff.ceilingSeconds
            #expect((0..<ceiling).contains(backoff.next(using: &random)))
        }
        #expect(backoff.ceilingSeconds == ReconnectBackoff.capSeconds, "200 steps stay finite, at the cap")
    }

    @Test func resetGoesBackToTheFirstStep() {
        var backoff = ReconnectBackoff()
        var top = FixedRandom(value: .max)
        for _ in 0..<4 { _ = backoff.next(using: &top) }
        backoff.reset()
        #expect(backoff.attempts == 0 && backoff.ceilingSeconds == ReconnectBackoff.baseSeconds)
    }
}
