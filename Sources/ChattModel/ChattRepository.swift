import JSON

/// Where chatts are kept. Calls block the calling thread; the server runs them off its I/O queues.
public protocol ChattRepository: Sendable {
    /// Stores `chatt`; returns only after it is committed.
    func add(_ chatt: NewChatt) throws(RepositoryError)
    /// Every chatt, oldest first in posting order, with the version of the store they were read at.
    func snapshot() throws(RepositoryError) -> ChattSnapshot
    /// The store's current version: a cheap query that tells whether a cached snapshot is still current.
    func version() throws(RepositoryError) -> ChattsVersion
    /// Succeeds when the store answers.
    func ping() throws(RepositoryError)
}

/// Identifies the set of stored chatts. Chatts are only ever added, so the count alone changes with every
/// committed post; the last sequence number also catches an operator deleting one row and a post adding one.
public struct ChattsVersion: Sendable, Equatable {
    public var count: Int
    public var lastSequence: Int64

    public init(count: Int, lastSequence: Int64) {
        self.count = count
        self.lastSequence = lastSequence
    }
}

/// Chatts read together with the version they make up.
public struct ChattSnapshot: Sendable, Equatable {
    public var chatts: [StoredChatt]
    public var version: ChattsVersion

    public init(chatts: [StoredChatt], version: ChattsVersion) {
        self.chatts = chatts
        self.version = version
    }
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

    /// What the repository said, for the operator's log (never for clients).
    public var detail: String {
        switch self {
        case .unavailable(let detail), .rejected(let detail), .failed(let detail): detail
        }
    }
}
