import ChattFeed
import ChattModel

extension ChattFeed {
    /// `answer(_:before:)`'s feed, with a deadline no test that passes reaches (`untilTheTestFails`).
    public func read(_ kind: Kind) async throws(RepositoryError) -> EncodedFeed {
        try await answer(kind, before: .untilTheTestFails).feed
    }
}
