@testable import HTTPServer
import Testing

@Suite struct TimerArmingTests {
    @Test func onlyASoonerDeadlineArmsTheTimerUntilItFires() {
        var timer = TimerArming()
        let first = timer.arm(for: Instant(nanoseconds: 10))
        let later = timer.arm(for: Instant(nanoseconds: 20))
        let sooner = timer.arm(for: Instant(nanoseconds: 5))
        #expect(first == Instant(nanoseconds: 10) && later == nil && sooner == Instant(nanoseconds: 5))
        timer.fired()
        let again = timer.arm(for: Instant(nanoseconds: 20))
        #expect(again == Instant(nanoseconds: 20), "after firing, any deadline arms it")
    }
}
