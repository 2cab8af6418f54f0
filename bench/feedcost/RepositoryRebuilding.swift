// The in-memory store for revisions whose posts invalidate the feed cache: see cost.sh.
import ChattFeed
import ChattModel
import Locking

final class BenchRepository: ChattRepository {
    private let rows = Locked<[StoredChatt]>([])

    init(rows count: Int) {
        rows.withLock { $0 = (0..<count).map(makeRow) }
    }

    func addBatch(_ count: Int) {
        rows.withLock { rows in rows += (rows.count..<(rows.count + count)).map(makeRow) }
    }

    func add(_ chatt: NewChatt) throws(RepositoryError) { fatalError("posts go through addBatch") }

    func snapshot() throws(RepositoryError) -> ChattSnapshot {
        let all = rows.withLock { $0 }
        return ChattSnapshot(chatts: all, version: ChattsVersion(count: all.count, lastSequence: Int64(all.count)))
    }

    func version() throws(RepositoryError) -> ChattsVersion {
        let count = rows.withLock { $0.count }
        return ChattsVersion(count: count, lastSequence: Int64(count))
    }

    func ping() throws(RepositoryError) {}
}

/// As a post does: invalidate before the 200; the next read rebuilds (without the query a database would add).
func postAndRead(_ repository: BenchRepository, _ cache: ChattFeedCache, _ batch: Int) async -> EncodedFeed {
    repository.addBatch(batch)
    cache.invalidate()
    return await readFeed(cache, repository)
}

/// A read of the feed, blocking: these revisions' cache has no other.
func readFeed(_ cache: ChattFeedCache, _ repository: BenchRepository) async -> EncodedFeed {
    try! cache.feed(.maps, from: repository)
}

/// The cached feeds, trusting notifications as a server whose listener listens does.
func makeFeeds(_ repository: BenchRepository) -> ChattFeedCache {
    let cache = ChattFeedCache()
    cache.setNotificationsTrusted(true)
    return cache
}
