import ChattModel

extension ChattRepository {
    /// Every chatt, oldest first in posting order: the snapshot without its version, for assertions.
    func all() throws(RepositoryError) -> [StoredChatt] {
        try snapshot().chatts
    }
}
