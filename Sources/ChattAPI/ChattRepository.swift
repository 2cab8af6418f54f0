/// Where chatts are kept. Calls block the calling thread; the server runs them off its I/O queues.
public protocol ChattRepository: Sendable {
    /// Stores `chatt`; returns only after it is committed.
    func add(_ chatt: NewChatt) throws(RepositoryError)
    /// Every chatt, oldest first in posting order.
    func all() throws(RepositoryError) -> [StoredChatt]
    /// Succeeds when the store answers.
    func ping() throws(RepositoryError)
}

/// How a repository call failed, as far as a client needs to know.
public enum RepositoryError: Error, Sendable, Equatable {
    /// The store is down, overloaded or timed out; the client may retry later (503).
    /// For `add`, the chatt was not stored, or its outcome is unknown.
    case unavailable(String)
    /// The store refused the value itself (e.g. too long, bad encoding) (400).
    case rejected(String)
    /// Anything else (500). The string is for logs only, never for clients.
    case failed(String)
}
