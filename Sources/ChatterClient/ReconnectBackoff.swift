/// How long to wait before each new attempt: capped exponential back-off with full jitter.
///
/// The n-th wait in a row (from 0) is drawn uniformly from [0, min(cap, base × 2ⁿ)), so clients that lost
/// the same server at the same moment do not all come back at once. `reset()` after a connection that worked.
public struct ReconnectBackoff: Equatable, Sendable {
    /// The first ceiling, in seconds.
    public static let baseSeconds = 0.5
    /// The highest ceiling, in seconds.
    public static let capSeconds = 30.0

    /// Waits drawn since the last reset.
    public private(set) var attempts = 0

    /// A back-off at its first step.
    public init() {}

    /// The ceiling of the next wait: base × 2^attempts, at most the cap.
    public var ceilingSeconds: Double {
        // 2^6 × 0.5 s already passes the cap; stopping the exponent there keeps it finite however long it runs.
        min(Self.capSeconds, Self.baseSeconds * Double(1 << min(attempts, 16)))
    }

    /// The next wait in seconds, drawn with `generator`, and one step up.
    public mutating func next(using generator: inout some RandomNumberGenerator) -> Double {
        let ceiling = ceilingSeconds
        attempts += 1
        // The top 53 bits of one draw as a fraction in [0, 1): one call, no rejection loop, so a generator
        // that gives a fixed value in tests gives a fixed wait.
        return ceiling * Double(generator.next() >> 11) * 0x1p-53
    }

    /// Back to the first step.
    public mutating func reset() {
        attempts = 0
    }
}
