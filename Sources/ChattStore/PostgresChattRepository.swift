import ChattAPI
import CLibPQ

/// Stores chatts in PostgreSQL through a connection pool.
public final class PostgresChattRepository: ChattRepository {
    public init() {}
    public func add(_ chatt: NewChatt) throws(RepositoryError) { fatalError("not implemented") }
    public func all() throws(RepositoryError) -> [StoredChatt] { fatalError("not implemented") }
    public func ping() throws(RepositoryError) { fatalError("not implemented") }
}
