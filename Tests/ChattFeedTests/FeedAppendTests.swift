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
func rebuilt(_ kind: ChattFeed.Kind, _ repository: InMemoryChattRepository) throws -> EncodedFeed {
    try ChattFeed(repository: repository).read(kind)
}

/// Every byte and tag a client can see of `feed` is what a full read gives, and so are its slices and row index.
func expectSameAsRebuilt(
    _ feed: EncodedFeed, _ kind: ChattFeed.Kind, _ repository: InMemoryChattRepository,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let reference = try rebuilt(kind, repository)
    #expect(feed.identity.body == reference.identity.body, sourceLocation: sourceLocation)
    #expect(feed.identity.etag == reference.identity.etag, sourceLocation: sourceLocation)
    #expect(feed.gzipped().body == reference.gzipped().body, sourceLocation: sourceLocation)
    #expect(feed.gzipped().etag == reference.gzipped().etag, sourceLocation: sourceLocation)
    #expect(feed.rowCount == reference.rowCount && feed.version == reference.version, sourceLocation: sourceLocation)
    let count = feed.rowCount
    for range in [0..<count, 0..<min(1, count), (count / 2)..<count, max(0, count - 3)..<count] {
        #expect(feed.rows(range) == reference.rows(range), "\(range)", sourceLocation: sourceLocation)
    }
    for (row, stored) in repository.chatts.enumerated() {
        let id = try #require(ChattID(Substring(stored.id)))
        #expect(feed.rowIndex().row(of: id) == row, sourceLocation: sourceLocation)
    }
}

/// Taking commits into the cached feed instead of re-reading the store.
@Suite struct FeedAppendTests {
    let repository = InMemoryChattRepository()
    let feeds: ChattFeed

    init() {
        feeds = ChattFeed(repository: repository)
        feeds.listening(true)
    }

    @Test(arguments: [ChattFeed.Kind.maps, .chatts])
    func appendedFeedsAreByteIdenticalToARebuiltOne(_ kind: ChattFeed.Kind) throws {
        _ = try feeds.read(kind)
        var serial = 0
        // Batches of every size, past the tail, so that rows settle in the lineage on the way.
        for size in [1, 2, 1, 5, 13, 1, 1, 30, 3, 8, 9, 1] {
            var rows: [SequencedChatt] = []
            for _ in 0..<size {
                serial += 1
                rows += try repository.add(variedChatt(serial)).chatts
            }
            feeds.append(ChattBatch(rows))
            let feed = try #require(feeds.currentFeed(kind), "appended, so current with no read")
            try expectSameAsRebuilt(feed, kind, repository)
        }
        #expect(repository.snapshotReads == 1 + 12, "one full read, then only the references")
        #expect(repository.deltaReads == 0)
    }

    @Test func aPostsBatchIsTakenInOnceWhicheverOfItsPostsComesFirst() throws {
        _ = try feeds.read(.maps)
        let batch = ChattBatch(try (1...3).flatMap { try repository.add(variedChatt($0)).chatts })
        feeds.append(batch)
        let generation = feeds.generation
        feeds.append(batch)
        feeds.append(batch)
        #expect(feeds.generation == generation, "the other posts of a batch change nothing")
        try expectSameAsRebuilt(try #require(feeds.currentFeed(.maps)), .maps, repository)
    }

    @Test func batchesTakenInOutOfCommitOrderStillComeOutInFeedOrder() throws {
        _ = try feeds.read(.chatts)
        let first = try repository.add(variedChatt(1))
        let second = try repository.add(variedChatt(2))
        // The second commit's post runs first.
        feeds.append(second)
        feeds.append(first)
        #expect(repository.snapshotReads == 1, "both placed without a read")
        try expectSameAsRebuilt(try #require(feeds.currentFeed(.chatts)), .chatts, repository)
    }

    @Test func aRowCommittedLateByAnotherWriterGoesInItsPlaceAmongTheNewest() throws {
        for serial in 1...20 { try repository.add(variedChatt(serial)) }
        _ = try feeds.read(.maps)
        feeds.append(try repository.add(variedChatt(21)))
        // Another process's transaction began before chatt 21's and committed after it: it sorts before 21.
        repository.storeCommitted(variedChatt(99), timestamp: "2026-03-25T08:11:59.100020Z")
        feeds.chattsAdded()
        let feed = try feeds.read(.maps)
        #expect(repository.snapshotReads == 1 && repository.deltaReads == 1, "caught up, not read again")
        try expectSameAsRebuilt(feed, .maps, repository)
    }

    @Test func aRowThatSortsAmongTheSettledOnesIsReadInFull() throws {
        for serial in 1...40 { try repository.add(variedChatt(serial)) }
        _ = try feeds.read(.maps)
        repository.storeCommitted(variedChatt(99), timestamp: "2026-03-25T08:11:59.100002Z")
        feeds.chattsAdded()
        let feed = try feeds.read(.maps)
        try expectSameAsRebuilt(feed, .maps, repository)
        #expect(repository.deltaReads == 1 && repository.snapshotReads == 2 + 1, "the count told: read in full")
    }

    @Test func anAnnouncedInsertIsCaughtUpWithTheNewRowsOnly() throws {
        for serial in 1...3 { try repository.add(variedChatt(serial)) }
        _ = try feeds.read(.chatts)
        for serial in 4...6 { try repository.add(variedChatt(serial)) }
        feeds.chattsAdded()
        #expect(feeds.currentFeed(.chatts) == nil)
        try expectSameAsRebuilt(try feeds.read(.chatts), .chatts, repository)
        #expect(repository.snapshotReads == 1 + 1 && repository.deltaReads == 1)
        // Nothing new since: a catch-up that finds nothing keeps the same bytes.
        feeds.chattsAdded()
        let again = try feeds.read(.chatts)
        #expect(again.identity.body.bytes == ChattRowEncoder.chattsRows(repository.chatts))
    }

    @Test func aStaleFeedIsNotAppendedToButReadAfterwards() throws {
        try repository.add(variedChatt(1))
        _ = try feeds.read(.maps)
        // An operator's DELETE was announced; a post then lands before anyone read.
        feeds.invalidate()
        feeds.append(try repository.add(variedChatt(2)))
        #expect(feeds.currentFeed(.maps) == nil)
        try expectSameAsRebuilt(try feeds.read(.maps), .maps, repository)
        #expect(repository.snapshotReads == 2 + 1 && repository.deltaReads == 0, "an edit means a full read")
    }

    @Test func aPostIsInTheFeedBeforeItsAnswerEvenWhenTheFeedWasBeingRead() throws {
        try repository.add(variedChatt(1))
        let gate = repository.holdNextSnapshot()
        let leader = onThreads(1) { _ in _ = try? self.feeds.read(.maps) }
        gate.waitUntilEntered()
        // The post commits and is taken in while the read that began before it is still running.
        feeds.append(try repository.add(variedChatt(2)))
        gate.release()
        leader.wait()
        let feed = try feeds.read(.maps)
        #expect(feed.rowCount == 2, "the older read must not be served after the post")
    }

    @Test func untrustedReadsServeTheAppendedFeedAfterTheVersionCheck() throws {
        let untrusted = ChattFeed(repository: repository)
        try repository.add(variedChatt(1))
        _ = try untrusted.read(.maps)
        untrusted.append(try repository.add(variedChatt(2)))
        let feed = try untrusted.read(.maps)
        #expect(feed.rowCount == 2)
        #expect(repository.snapshotReads == 1 && repository.versionReads == 2)
        // A change the version shows and no one announced is still read in full.
        try repository.add(variedChatt(3))
        #expect(try untrusted.read(.maps).rowCount == 3)
        #expect(repository.snapshotReads == 2)
    }

    @Test func aLostNotificationFallsBackToTheVersionCheck() throws {
        try repository.add(variedChatt(1))
        _ = try feeds.read(.maps)
        // Another process committed, then died before announcing it.
        try repository.add(variedChatt(2))
        let store = try repository.version()
        feeds.audit(storeVersion: store)
        #expect(feeds.currentFeed(.maps)?.rowCount == 1, "one check apart could be an announcement on its way")
        feeds.audit(storeVersion: store)
        #expect(feeds.currentFeed(.maps) == nil, "behind at two checks in a row: a notification was lost")
        let feed = try feeds.read(.maps)
        #expect(feed.rowCount == 2)
        #expect(repository.deltaReads == 1 && repository.snapshotReads == 1, "caught up, the count checked")
        feeds.audit(storeVersion: store)
        feeds.audit(storeVersion: store)
        #expect(feeds.currentFeed(.maps) != nil, "in step: nothing to do")
    }

    @Test func aReadBetweenTwoChecksClearsTheSuspicion() throws {
        try repository.add(variedChatt(1))
        _ = try feeds.read(.maps)
        try repository.add(variedChatt(2))
        feeds.audit(storeVersion: try repository.version())
        // The announcement arrived after all, and a read caught up: then the store moved on again.
        feeds.chattsAdded()
        _ = try feeds.read(.maps)
        try repository.add(variedChatt(3))
        feeds.audit(storeVersion: try repository.version())
        #expect(feeds.currentFeed(.maps) != nil, "a counted read came between the two checks")
    }
}

/// Versions of one lineage read concurrently with appends.
@Suite struct FeedLineageConcurrencyTests {
    @Test func anOlderVersionsGzipAfterANewerOnesIsTheNewerOne() throws {
        let repository = InMemoryChattRepository()
        let feeds = ChattFeed(repository: repository)
        feeds.listening(true)
        _ = try feeds.read(.maps)
        var versions: [EncodedFeed] = []
        for serial in 1...20 {
            feeds.append(try repository.add(variedChatt(serial)))
            versions.append(try #require(feeds.currentFeed(.maps)))
        }
        let newest = versions[19].gzipped()
        // The stream has gone past version 5's rows: a newer version is as good for whoever held version 5.
        let older = versions[4].gzipped()
        #expect(older.etag == newest.etag && older.body == newest.body)
        #expect(gunzip(older.body.bytes) == versions[19].identity.body.bytes)
        // Its identity is still its own.
        #expect(versions[4].identity.body.bytes == ChattRowEncoder.mapsRows(Array(repository.chatts.prefix(5))))
    }

    @Test func readersOfEveryFormRunBesideAppendsAndSeeConsistentVersions() throws {
        let repository = InMemoryChattRepository()
        let feeds = ChattFeed(repository: repository)
        feeds.listening(true)
        _ = try feeds.read(.maps)
        let posters = onThreads(4) { thread in
            for index in 0..<40 {
                if let batch = try? repository.add(variedChatt(thread * 1000 + index)) { feeds.append(batch) }
            }
        }
        let readers = onThreads(4) { thread in
            for _ in 0..<60 {
                guard let feed = try? feeds.read(.maps) else { continue }
                let body = thread % 2 == 0 ? feed.identity.body.bytes : (gunzip(feed.gzipped().body.bytes) ?? [])
                #expect(ChattFeedTests.isJSONArray(body))
                if let last = repository.chatts.first, let id = ChattID(Substring(last.id)) {
                    #expect(feed.rowCount == 0 || feed.rowIndex().row(of: id) == 0)
                }
            }
        }
        posters.wait()
        readers.wait()
        let feed = try feeds.read(.maps)
        #expect(feed.identity.body.bytes == ChattRowEncoder.mapsRows(repository.chatts))
        #expect(gunzip(feed.gzipped().body.bytes) == feed.identity.body.bytes)
    }
}

extension ChattFeedTests {
    /// Whether `body` parses as a JSON array.
    static func isJSONArray(_ body: [UInt8]) -> Bool {
        guard case .array? = try? JSONParser.parse(body) else { return false }
        return true
    }
}
