import ChattModel

extension ChattRepository {
    /// Every chatt, oldest first in posting order, with the version they make up: a full read, for assertions.
    func fullRead() async throws(RepositoryError) -> (chatts: [StoredChatt], version: ChattsVersion) {
        var chatts: [StoredChatt] = []
        let version = try await readChatts(before: .soon) { chatts.append($0.chatt) }
        return (chatts, version)
    }

    /// Every chatt, oldest first in posting order, for assertions.
    func all() async throws(RepositoryError) -> [StoredChatt] {
        try await fullRead().chatts
    }
}
