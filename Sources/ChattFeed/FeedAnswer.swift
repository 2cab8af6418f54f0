import ChattModel

/// The feed a read is answered with, and whether it is stale.
public struct FeedAnswer: Sendable {
    public let feed: EncodedFeed
    /// Set when `feed` is the last good one, served because the store could not answer (`--stale-if-error`);
    /// nil when it is current.
    public let stale: StaleFeed?
}

/// How a stale feed came to be served: what the observer logs, and what `Age` says.
public struct StaleFeed: Sendable, Equatable {
    /// Whole seconds since the feed was last known current.
    public let age: Int
    /// Why the store could not answer, for the operator's log (never for clients).
    public let failure: RepositoryError

    public init(age: Int, failure: RepositoryError) {
        self.age = age
        self.failure = failure
    }
}
