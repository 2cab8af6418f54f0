@testable import HTTPServer
import Testing

/// One `accept_failed` line per episode of failures, on a made-up clock.
@Suite struct AcceptFailuresTests {
    static func at(_ seconds: Double) -> Instant {
        Instant(nanoseconds: 1_000_000_000_000) + seconds
    }

    @Test func theFirstFailureBeginsAnEpisode() {
        var failures = AcceptFailures()
        let logged = failures.failed(at: Self.at(0))
        #expect(logged)
    }

    @Test func failuresBetweenSuccessesUnderLoadAreOneEpisode() {
        var failures = AcceptFailures()
        var logged = [failures.failed(at: Self.at(0))]
        // Connections close and others take their descriptors: accepts fail again every second or so.
        for second in stride(from: 0.5, through: 60, by: 0.9) {
            logged.append(failures.failed(at: Self.at(second)))
        }
        #expect(logged.filter { $0 }.count == 1 && logged[0])
    }

    @Test func aFailureAfterAQuietSpellBeginsAnother() {
        var failures = AcceptFailures()
        let last = 3 + AcceptFailures.quietSeconds - 0.1
        let logged = [0, 3, last, last + AcceptFailures.quietSeconds].map { failures.failed(at: Self.at($0)) }
        #expect(logged == [true, false, false, true])
    }
}
