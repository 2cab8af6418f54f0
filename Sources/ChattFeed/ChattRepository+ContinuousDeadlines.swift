import ChattModel
import Dispatch

// The repository's reads as chatterd calls them, with deadlines on the continuous clock, until the repository
// protocol itself takes `ContinuousClock.Instant` (branch `suspend`): each passes the same moment on as a
// `DispatchTime`. Delete this file once ChattRepository's deadlines are continuous; the calls then reach the
// protocol's requirements unchanged.
extension ChattRepository {
    /// `readChatts(before:_:)` with a continuous deadline.
    public func readChatts(
        before deadline: ContinuousClock.Instant, _ row: (SequencedChatt) -> Void
    ) async throws(RepositoryError) -> ChattsVersion {
        try await readChatts(before: DispatchTime(deadline), row)
    }

    /// `chatts(after:before:)` with a continuous deadline.
    public func chatts(
        after position: FeedPosition?, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> ChattDelta {
        try await chatts(after: position, before: DispatchTime(deadline))
    }

    /// `version(before:)` with a continuous deadline.
    public func version(before deadline: ContinuousClock.Instant) async throws(RepositoryError) -> ChattsVersion {
        try await version(before: DispatchTime(deadline))
    }

    /// `ping(before:)` with a continuous deadline.
    public func ping(before deadline: ContinuousClock.Instant) async throws(RepositoryError) {
        try await ping(before: DispatchTime(deadline))
    }
}

extension DispatchTime {
    /// The moment `instant` names: both clocks are monotonic, so the time left until it is the same on each.
    init(_ instant: ContinuousClock.Instant) {
        let left = ContinuousClock.now.duration(to: instant).components
        // Past a year, or before now, the exact moment makes no difference to a deadline.
        guard left.seconds < 365 * 86_400 else {
            self = .distantFuture
            return
        }
        let nanoseconds = max(0, left.seconds * 1_000_000_000 + left.attoseconds / 1_000_000_000)
        self = .now() + .nanoseconds(Int(nanoseconds))
    }
}
