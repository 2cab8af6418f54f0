import ChattModel

extension ChattRepository {
    /// Every chatt the store holds now, oldest first in posting order, with the newest tick (made now): a full read,
    /// for assertions.
    func fullRead() async throws(RepositoryError) -> (chatts: [StoredChatt], tick: LogTick) {
        let tick = try await tick(before: .soon)
        var chatts: [StoredChatt] = []
        _ = try await readChatts(at: tick.position(), before: .soon) { chatts.append($0.chatt) }
        return (chatts, tick)
    }

    /// Every chatt, oldest first in posting order, for assertions.
    func all() async throws(RepositoryError) -> [StoredChatt] {
        try await fullRead().chatts
    }
}
