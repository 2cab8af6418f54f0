@testable import ChattStore
import Testing

@Suite struct ConnectBackoffTests {
    let start = ContinuousClock.now

    @Test func healthyDatabaseAllowsEveryAttempt() {
        var backoff = ConnectBackoff()
        let first = backoff.startAttempt(at: start)
        let second = backoff.startAttempt(at: start)
        #expect(first && second)
        #expect(backoff.retryAt == nil)
    }

    @Test func waitsDoubleFromATenthOfASecondAndCapAtFiveSeconds() throws {
        var backoff = ConnectBackoff()
        var now = start
        var waits: [Duration] = []
        for _ in 0..<9 {
            backoff.recordFailure(at: now)
            let retryAt = try #require(backoff.retryAt)
            waits.append(retryAt - now)
            now = retryAt
        }
        let expected: [Duration] = [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
                                    .milliseconds(1600), .milliseconds(3200), .seconds(5), .seconds(5), .seconds(5)]
        #expect(waits == expected)
    }

    @Test func attemptsFailFastUntilTheWaitIsOver() {
        var backoff = ConnectBackoff()
        backoff.recordFailure(at: start)
        let early = backoff.startAttempt(at: start + .milliseconds(99))
        let onTime = backoff.startAttempt(at: start + .milliseconds(100))
        #expect(!early)
        #expect(onTime)
    }

    @Test func onlyOneCallerProbesAFailingDatabase() {
        var backoff = ConnectBackoff()
        backoff.recordFailure(at: start)
        let probeTime = start + .milliseconds(150)
        let probe = backoff.startAttempt(at: probeTime)
        let other = backoff.startAttempt(at: probeTime + .milliseconds(10))
        #expect(probe)
        #expect(!other)
    }

    @Test func successResetsTheWait() {
        var backoff = ConnectBackoff()
        backoff.recordFailure(at: start)
        backoff.recordFailure(at: start)
        backoff.recordSuccess()
        #expect(backoff.retryAt == nil)
        backoff.recordFailure(at: start)
        #expect(backoff.retryAt == start + .milliseconds(100))
    }
}
