/// When a failing `accept` is worth a log line: once per episode. Out of descriptors under load, accepts fail and
/// succeed in turn as connections close and others arrive, so an episode is not ended by one success; it ends
/// once `quietSeconds` pass without a failure.
struct AcceptFailures {
    /// How long accepts must go without failing before the next failure begins a new episode.
    static let quietSeconds = 10.0

    private var lastFailure: Instant?

    /// An accept failed at `now`: whether this begins an episode (and is logged).
    mutating func failed(at now: Instant) -> Bool {
        defer { lastFailure = now }
        guard let lastFailure else { return true }
        return now.seconds(since: lastFailure) >= Self.quietSeconds
    }
}
