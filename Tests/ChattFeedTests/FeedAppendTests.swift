import ChangeLog
@testable import ChattFeed
import ChattModel
import JSON
import TestSupport
import Testing

func variedChatt(_ serial: Int) -> NewChatt {
    // Escapes, non-ASCII and geodata on some rows, so that the bytes compared are not all alike.
    NewChatt(
        name: "user\(serial % 7)", message: serial % 5 == 0 ? "quote \" and é \(serial)" : "message \(serial)",
        geodata: serial % 3 == 0 ? #"[42.29,-83.71,"North","walking"]"# : nil)
}

/// A feed read in full from `repository` by a `ChattFeed` of its own.
func rebuilt(_ kind: ChattFeed.Kind, _ repository: InMemoryChattRepository) async throws -> EncodedFeed {
    try await ChattFeed(repository: repository).read(kind)
}

/// Every byte and tag a client can see of `feed` is what a full read gives, and so are its slices and row index.
func expectSameAsRebuilt(
    _ feed: EncodedFeed, _ kind: ChattFeed.Kind, _ repository: InMemoryChattRepository,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let reference = try await rebuilt(kind, repository)
    #expect(feed.identity.body == reference.identity.body, sourceLocation: sourceLocation)
    #expect(feed.identity.etag == reference.identity.etag, sourceLocation: sourceLocation)
    #expect(await feed.gzipped().body == reference.gzipped().body, sourceLocation: sourceLocation)
    #expect(await feed.gzipped().etag == reference.gzipped().etag, sourceLocation: sourceLocation)
    #expect(feed.rowCount == reference.rowCount && feed.position == reference.position, sourceLocation: sourceLocation)
    let count = feed.rowCount
    for range in [0..<count, 0..<min(1, count), (count / 2)..<count, max(0, count - 3)..<count] {
        #expect(feed.rows(range) == reference.rows(range), "\(range)", sourceLocation: sourceLocation)
    }
    for (row, stored) in repository.chatts.enumerated() {
        let id = try #require(ChattID(Substring(stored.id)))
        #expect(feed.rowIndex().row(of: id) == row, sourceLocation: sourceLocation)
    }
}

/// Taking the log's chatts into the feed instead of reading the store in full.
@Suite struct FeedAppendTests {
    let repository = InMemoryChattRepository()
    let feeds: ChattFeed

    init() {
        feeds = ChattFeed(repository: repository)
        feeds.listening(true)
    }

    @Test(arguments: [ChattFeed.Kind.maps, .chatts])
    func appendedFeedsAreByteIdenticalToARebuiltOne(_ kind: ChattFeed.Kind) async throws {
        _ = try await feeds.read(kind)
        var serial = 0
        // Ticks of every size, past the tail, so that rows settle in the lineage on the way.
        for size in [1, 2, 1, 5, 13, 1, 1, 30, 3, 8, 9, 1] {
            for _ in 0..<size {
                serial += 1
                repository.storeCommitted(variedChatt(serial), timestamp: timestamp(serial))
            }
            try await feeds.log.noticedAndRead()
            let feed = try await feeds.read(kind)
            try await expectSameAsRebuilt(feed, kind, repository)
        }
        #expect(repository.fullReads == 1 + 12, "one full read, then only the references")
    }

    @Test func aTickLargerThanALogPageIsAppendedPageByPage() async throws {
        let feeds = ChattFeed(repository: repository, log: ChangeLog(repository: repository, pageSize: 7))
        feeds.listening(true)
        _ = try await feeds.read(.maps)
        for serial in 1...50 { repository.storeCommitted(variedChatt(serial), timestamp: timestamp(serial)) }
        try await feeds.log.noticedAndRead()
        let feed = try await feeds.read(.maps)
        #expect(feed.position == repository.newestTick.position())
        try await expectSameAsRebuilt(feed, .maps, repository)
        #expect(repository.fullReads == 1 + 1)
    }

    @Test func aRowCommittedLateByAnotherWriterGoesInItsPlaceAmongTheNewest() async throws {
        for serial in 1...20 { try await repository.add(variedChatt(serial)) }
        _ = try await feeds.read(.maps)
        try await repository.add(variedChatt(21))
        // Another process's transaction began before chatt 21's and committed after it: it sorts before 21.
        repository.storeCommitted(variedChatt(99), timestamp: "2026-03-25T08:11:59.100020Z")
        try await feeds.log.noticedAndRead()
        let feed = try await feeds.read(.maps)
        #expect(repository.fullReads == 1, "appended, not read again")
        try await expectSameAsRebuilt(feed, .maps, repository)
    }

    @Test func aRowThatSortsAmongTheSettledOnesIsReadInFull() async throws {
        for serial in 1...40 { try await repository.add(variedChatt(serial)) }
        _ = try await feeds.read(.maps)
        repository.storeCommitted(variedChatt(99), timestamp: "2026-03-25T08:11:59.100002Z")
        try await feeds.log.noticedAndRead()
        let feed = try await feeds.read(.maps)
        try await expectSameAsRebuilt(feed, .maps, repository)
        #expect(repository.fullReads == 2 + 1)
    }

    @Test func aLogTickWithNothingNewKeepsTheSameBytesAndMovesOn() async throws {
        try await repository.add(variedChatt(1))
        let first = try await feeds.read(.chatts)
        try await feeds.log.noticedAndRead()
        let again = try await feeds.read(.chatts)
        #expect(again.identity.etag == first.identity.etag && again.position == first.position)
    }

    @Test func aPostIsInTheFeedBeforeItsAnswerEvenWhenTheFeedWasBeingRead() async throws {
        try await repository.add(variedChatt(1))
        let gate = repository.holdNextFullRead()
        let leader = Task { [feeds] in _ = try? await feeds.read(.maps) }
        await gate.waitUntilEntered()
        // The post commits while the read that began before it is still running.
        let posted = Task { [repository] in try await repository.add(variedChatt(2)) }
        gate.release()
        await leader.value
        try await posted.value
        let feed = try await feeds.read(.maps)
        #expect(feed.rowCount == 2, "the older read must not be served after the post")
    }

    @Test func aNewStartReadsAtOnceOnlyTheKindsReadSinceTheyWerePublished() async throws {
        try await repository.add(variedChatt(1))
        _ = try await feeds.read(.maps)
        _ = try await feeds.read(.chatts)
        // Both taken in; only the maps read since.
        try await repository.add(variedChatt(2))
        _ = try await feeds.read(.maps)
        let reads = repository.fullReads
        repository.edit()
        try await feeds.log.noticedAndRead()
        #expect(repository.fullReads == reads + 1, "the maps at once; the chatts wait for a reader")
        #expect(try await feeds.read(.chatts).rowCount == 2)
        #expect(repository.fullReads == reads + 2)
    }

    @Test func aLostNoticeIsCaughtByTheLogsCheck() async throws {
        try await repository.add(variedChatt(1))
        _ = try await feeds.read(.maps)
        // Another process committed, then died before announcing it.
        repository.storeCommitted(variedChatt(2), timestamp: timestamp(2))
        #expect(try await feeds.read(.maps).rowCount == 1, "trusted: nothing told of it yet")
        let before = feeds.log.position
        feeds.log.check()
        // Nothing waits for a check's read: the log's position moves when it is done.
        while feeds.log.position == before { await Task.yield() }
        #expect(try await feeds.read(.maps).rowCount == 2)
        #expect(repository.fullReads == 1, "appended")
    }

    /// A timestamp after every `add`'s in a test, in the order of `serial`.
    private func timestamp(_ serial: Int) -> String {
        "2026-03-25T08:11:59.\(300_000 + serial)Z"
    }
}

/// Versions of one lineage read concurrently with appends.
@Suite struct FeedLineageConcurrencyTests {
    @Test func anOlderVersionsGzipAfterANewerOnesIsTheNewerOne() async throws {
        let repository = InMemoryChattRepository()
        let feeds = ChattFeed(repository: repository)
        feeds.listening(true)
        _ = try await feeds.read(.maps)
        var versions: [EncodedFeed] = []
        for serial in 1...20 {
            try await repository.add(variedChatt(serial))
            versions.append(try await feeds.read(.maps))
        }
        let newest = await versions[19].gzipped()
        // The stream has gone past version 5's rows: a newer version is as good for whoever held version 5.
        let older = await versions[4].gzipped()
        #expect(older.etag == newest.etag && older.body == newest.body)
        #expect(gunzip(older.body.bytes) == versions[19].identity.body.bytes)
        // Its identity is still its own.
        #expect(versions[4].identity.body.bytes == ChattRowEncoder.mapsRows(Array(repository.chatts.prefix(5))))
    }

    @Test func readersOfEveryFormRunBesideAppendsAndSeeConsistentVersions() async throws {
        let repository = InMemoryChattRepository()
        let feeds = ChattFeed(repository: repository)
        feeds.listening(true)
        _ = try await feeds.read(.maps)
        // Posts on threads of their own, as the store's loop answers them, beside the readers' tasks.
        let posters = onThreads(4) { thread in
            for index in 0..<40 { repository.add(variedChatt(thread * 1000 + index)) { _ in } }
        }
        await withTaskGroup(of: Void.self) { readers in
            for thread in 0..<4 {
                readers.addTask {
                    for _ in 0..<60 {
                        guard let feed = try? await feeds.read(.maps) else { continue }
                        var body = feed.identity.body.bytes
                        if thread % 2 == 1 { body = gunzip(await feed.gzipped().body.bytes) ?? [] }
                        #expect(ChattFeedTests.isJSONArray(body))
                        if let last = repository.chatts.first, let id = ChattID(Substring(last.id)) {
                            #expect(feed.rowCount == 0 || feed.rowIndex().row(of: id) == 0)
                        }
                    }
                }
            }
        }
        posters.wait()
        let feed = try await feeds.read(.maps)
        #expect(feed.identity.body.bytes == ChattRowEncoder.mapsRows(repository.chatts))
        #expect(await gunzip(feed.gzipped().body.bytes) == feed.identity.body.bytes)
    }
}

extension ChattFeedTests {
    /// Whether `body` parses as a JSON array.
    static func isJSONArray(_ body: [UInt8]) -> Bool {
        guard case .array? = try? JSONParser.parse(body) else { return false }
        return true
    }
}
