@testable import ChattAPI
import ChattModel
import Locking
import Testing

/// `/readyz`'s shared check, with a ping that answers only when the test says and a clock the test moves.
@Suite struct ReadinessCheckTests {
    /// A ping that counts its calls and holds each until `release` gives its outcome.
    final class HeldPing: Sendable {
        private let state = Locked((calls: 0, held: [CheckedContinuation<ReadinessCheck.Outcome, Never>]()))

        var calls: Int { state.withLock { $0.calls } }
        var holding: Int { state.withLock { $0.held.count } }

        func ping(_ deadline: ContinuousClock.Instant) async -> ReadinessCheck.Outcome {
            await withCheckedContinuation { continuation in
                state.withLock { state in
                    state.calls += 1
                    state.held.append(continuation)
                }
            }
        }

        func release(_ outcome: ReadinessCheck.Outcome) {
            for continuation in state.withLock({ state in defer { state.held = [] }; return state.held }) {
                continuation.resume(returning: outcome)
            }
        }
    }

    /// A deadline no test reaches.
    static let farOff = ContinuousClock.now + .seconds(3600)
    let clock = Locked(ContinuousClock.now)
    let held = HeldPing()

    func check() -> ReadinessCheck {
        ReadinessCheck(
            freshness: .seconds(1), now: { [clock] in clock.withLock { $0 } }, ping: { [held] in await held.ping($0) })
    }

    /// Spins (without sleeping) until `condition` holds.
    func until(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }

    @Test func probesAskingWhileACheckIsInFlightWaitForItsOutcome() async {
        let readiness = check()
        await withTaskGroup(of: ReadinessCheck.Outcome.self) { group in
            for _ in 0..<50 { group.addTask { await readiness.outcome(before: Self.farOff) } }
            await until { held.holding == 1 && readiness.waitingCount == 50 }
            held.release(.success(()))
            var outcomes = 0
            for await outcome in group {
                #expect((try? outcome.get()) != nil)
                outcomes += 1
            }
            #expect(outcomes == 50)
        }
        #expect(held.calls == 1, "one round trip for fifty probes")
    }

    @Test func anOutcomeIsReusedForASecondAndThenCheckedAgain() async {
        let readiness = check()
        async let first = readiness.outcome(before: Self.farOff)
        await until { held.holding == 1 }
        held.release(.success(()))
        _ = await first
        clock.withLock { $0 += .milliseconds(900) }
        _ = await readiness.outcome(before: Self.farOff)
        #expect(held.calls == 1, "within the second: reused")
        clock.withLock { $0 += .milliseconds(101) }
        async let later = readiness.outcome(before: Self.farOff)
        await until { held.holding == 1 }
        #expect(held.calls == 2, "a second later: asked again")
        held.release(.success(()))
        _ = await later
    }

    @Test func aFailureIsSharedAndReusedLikeASuccess() async {
        let readiness = check()
        async let first = readiness.outcome(before: Self.farOff)
        async let second = readiness.outcome(before: Self.farOff)
        await until { held.holding == 1 && readiness.waitingCount == 2 }
        held.release(.failure(.unavailable("connection refused")))
        let outcomes = await [first, second, readiness.outcome(before: Self.farOff)]
        for outcome in outcomes {
            guard case .failure(.unavailable(let detail)) = outcome else {
                Issue.record("expected the shared failure, got \(outcome)")
                continue
            }
            #expect(detail == "connection refused")
        }
        #expect(held.calls == 1)
    }
}
