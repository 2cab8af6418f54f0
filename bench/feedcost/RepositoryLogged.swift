// The store for revisions whose feeds follow a change log (migrations/0007 on): the test repository in memory,
// whose posts tell the log of their batch before they are answered, as the real store's do. See cost.sh.
import ChattFeed
import ChattModel
import TestSupport

struct BenchRepository {
    let store: InMemoryChattRepository

    init(rows count: Int) {
        store = InMemoryChattRepository((0..<count).map(makeRow))
    }
}

/// The feeds, following a log of their own, trusting notifications as a server whose listener listens does.
func makeFeeds(_ repository: BenchRepository) -> ChattFeed {
    let feeds = ChattFeed(repository: repository.store)
    feeds.listening(true)
    return feeds
}

/// The chatts of a post of `count`, made before the clock starts.
func storeBatch(_ repository: BenchRepository, _ count: Int) -> [NewChatt] {
    (0..<count).map { _ in NewChatt(name: "poster", message: "a message from the benchmark", geodata: benchGeodata) }
}

/// As posts do: each is stored and the log told of it before its 200. (The store here takes a post in one step,
/// so its own growth is timed too.)
func takeIn(_ chatts: [NewChatt], _ repository: BenchRepository, _ feeds: ChattFeed) async {
    for chatt in chatts { try! await feeds.repository.add(chatt) }
}

/// As a post does, then the next read.
func postAndRead(_ repository: BenchRepository, _ feeds: ChattFeed, _ batch: Int) async -> EncodedFeed {
    await takeIn(storeBatch(repository, batch), repository, feeds)
    return await readFeed(feeds, repository)
}

/// A read of the feed, which suspends.
func readFeed(_ feeds: ChattFeed, _ repository: BenchRepository) async -> EncodedFeed {
    try! await feeds.read(.maps)
}
