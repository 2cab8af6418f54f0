// The in-memory store for revisions whose repository only suspends (deadlines on ContinuousClock): see cost.sh.
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

    func add(_ chatt: NewChatt, completion: @escaping @Sendable (Result<ChattBatch, RepositoryError>) -> Void) {
        fatalError("posts go through addBatch")
    }

    func readChatts(
        before deadline: ContinuousClock.Instant, _ row: (SequencedChatt) -> Void
    ) async throws(RepositoryError) -> ChattsVersion {
        let all = rows.withLock { $0 }
        all.forEach(row)
        return ChattsVersion(count: all.count, lastSequence: Int64(all.count))
    }

    func chatts(
        after position: FeedPosition?, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> ChattDelta {
        fatalError("not caught up")
    }

    func version(before deadline: ContinuousClock.Instant) async throws(RepositoryError) -> ChattsVersion {
        let count = rows.withLock { $0.count }
        return ChattsVersion(count: count, lastSequence: Int64(count))
    }

    func ping(before deadline: ContinuousClock.Instant) async throws(RepositoryError) {}
}

/// As a post does: the batch's rows are taken in before the 200; then the next read.
func postAndRead(_ repository: BenchRepository, _ cache: ChattFeedCache, _ batch: Int) async -> EncodedFeed {
    cache.append(repository.addBatch(batch))
    return await readFeed(cache, repository)
}

/// A read of the feed, which suspends.
func readFeed(_ cache: ChattFeedCache, _ repository: BenchRepository) async -> EncodedFeed {
    try! await cache.feed(.maps, from: repository, before: .now + .seconds(60))
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
