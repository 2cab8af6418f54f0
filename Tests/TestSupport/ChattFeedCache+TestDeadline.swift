import ChattFeed
import ChattModel

extension ChattFeedCache {
    /// `feed(_:from:before:)` with a deadline a minute away, which no test that passes reaches.
    public func feed(_ kind: Kind, from repository: any ChattRepository) async throws(RepositoryError) -> EncodedFeed {
        try await feed(kind, from: repository, before: .now + .seconds(60))
    }
}
