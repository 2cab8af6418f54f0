import ChangeLog
import ChattModel

extension ChangeLog {
    /// A notice came (`noticed()`), and the log has read the store since: a read after this sees what it announced.
    public func noticedAndRead() async throws(RepositoryError) {
        noticed()
        _ = try await synced(before: .untilTheTestFails)
    }
}
