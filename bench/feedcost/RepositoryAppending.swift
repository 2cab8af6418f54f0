// The in-memory store for revisions whose posts hand the feed cache their rows (ChattBatch): see cost.sh.
import ChattFeed
import ChattModel
import Locking

final class BenchRepository: ChattRepository {
    private let rows = Locked<[SequencedChatt]>([])

    init(rows count: Int) {
        rows.withLock { $0 = (0..<count).map { SequencedChatt(sequence: Int64($0 + 1), chatt: makeRow($0)) } }
    }

    func addBatch(_ count: Int) -> ChattBatch {
        rows.withLock { rows in
            let added = (rows.count..<(rows.count + count)).map { SequencedChatt(sequence: Int64($0 + 1), chatt: makeRow($0)) }
            rows += added
            return ChattBatch(added)
        }
    }

    func add(_ chatt: NewChatt) throws(RepositoryError) -> ChattBatch { fatalError("posts go through addBatch") }

    func add(_ chatt: NewChatt, completion: @escaping @Sendable (Result<ChattBatch, RepositoryError>) -> Void) {
        fatalError("posts go through addBatch")
    }

    func snapshot() throws(RepositoryError) -> ChattSnapshot {
        let all = rows.withLock { $0 }
        return ChattSnapshot(chatts: all.map(\.chatt), version: ChattsVersion(count: all.count, lastSequence: Int64(all.count)))
    }

    func readChatts(_ row: (SequencedChatt) -> Void) throws(RepositoryError) -> ChattsVersion {
        let all = rows.withLock { $0 }
        all.forEach(row)
        return ChattsVersion(count: all.count, lastSequence: Int64(all.count))
    }

    func chatts(after position: FeedPosition?) throws(RepositoryError) -> ChattDelta { fatalError("not caught up") }

    func version() throws(RepositoryError) -> ChattsVersion {
        let count = rows.withLock { $0.count }
        return ChattsVersion(count: count, lastSequence: Int64(count))
    }

    func ping() throws(RepositoryError) {}
}

/// As a post does: the batch's rows are taken in before the 200; then the next read.
func postAndRead(_ repository: BenchRepository, _ cache: ChattFeedCache, _ batch: Int) async -> EncodedFeed {
    cache.append(repository.addBatch(batch))
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

/// A post's rows stored (not timed: the in-memory store's growth is not the feed's cost), then taken in (timed).
func storeBatch(_ repository: BenchRepository, _ count: Int) -> ChattBatch { repository.addBatch(count) }
func takeIn(_ rows: ChattBatch, _ repository: BenchRepository, _ cache: ChattFeedCache) async { cache.append(rows) }
