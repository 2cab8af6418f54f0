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
    func appendedFeedsAreByteIdenticalToARebuiltOne(_ kind: ChattFeed.Kind) async throws {
        _ = try await feeds.read(kind)
        var serial = 0
        // Batches of every size, past the tail, so that rows settle in the lineage on the way.
        for size in [1, 2, 1, 5, 13, 1, 1, 30, 3, 8, 9, 1] {
            var rows: [SequencedChatt] = []
            for _ in 0..<size {
                serial += 1
                rows += try await repository.add(variedChatt(serial)).chatts
            }
            feeds.append(ChattBatch(rows))
            let feed = try #require(feeds.currentFeed(kind), "appended, so current with no read")
            try await expectSameAsRebuilt(feed, kind, repository)
        }
        #expect(repository.snapshotReads == 1 + 12, "one full read, then only the references")
        #expect(repository.deltaReads == 0)
    }

    @Test func aPostsBatchIsTakenInOnceWhicheverOfItsPostsComesFirst() async throws {
        _ = try await feeds.read(.maps)
        var rows: [SequencedChatt] = []
        for serial in 1...3 { rows += try await repository.add(variedChatt(serial)).chatts }
        let batch = ChattBatch(rows)
        feeds.append(batch)
        let generation = feeds.generation
        feeds.append(batch)
        feeds.append(batch)
        #expect(feeds.generation == generation, "the other posts of a batch change nothing")
        try await expectSameAsRebuilt(try #require(feeds.currentFeed(.maps)), .maps, repository)
    }

    @Test func batchesTakenInOutOfCommitOrderAreCaughtUpInsteadOfAppended() async throws {
        _ = try await feeds.read(.chatts)
        let first = try await repository.add(variedChatt(1))
        let second = try await repository.add(variedChatt(2))
        // The second commit's post runs first: the feed lacks the first, so it could not name its position.
        feeds.append(second)
        #expect(feeds.currentFeed(.chatts) == nil, "left for the next read")
        feeds.append(first)
        let feed = try await feeds.read(.chatts)
        #expect(repository.snapshotReads == 1 && repository.deltaReads == 1, "caught up, not read again")
        #expect(feed.position == repository.clock && feed.rowCount == 2)
        try await expectSameAsRebuilt(feed, .chatts, repository)
    }

    @Test func anAppendIsPublishedWhenTheBatchFollowsTheFeedsPositionDirectly() async throws {
        _ = try await feeds.read(.maps)
        #expect(feeds.currentFeed(.maps)?.position == CommitPosition(epoch: 1, count: 0))
        let batch = try await repository.add(variedChatt(1))
        #expect(batch.previous == 0 && batch.position == CommitPosition(epoch: 1, count: 1))
        feeds.append(batch)
        let feed = try #require(feeds.currentFeed(.maps), "appended, so current with no read")
        #expect(feed.position == batch.position && feed.position == repository.clock)
        try await expectSameAsRebuilt(feed, .maps, repository)
        #expect(repository.deltaReads == 0)
    }

    @Test func anAppendAfterAnotherWritersCommitIsLeftForACatchUpThatStillShowsThePost() async throws {
        try await repository.add(variedChatt(1))
        _ = try await feeds.read(.maps)
        // Another process commits, its notice not yet here; then this process's post commits after it.
        repository.storeCommitted(variedChatt(2), timestamp: "2026-03-25T08:11:59.100002Z")
        let own = try await repository.add(variedChatt(3))
        #expect(own.previous == 2 && feeds.currentFeed(.maps)?.position.count == 1)
        feeds.append(own)
        #expect(feeds.currentFeed(.maps) == nil, "the feed would hold 3 without 2: not published")
        let feed = try await feeds.read(.maps)
        #expect(feed.rowCount == 3, "read your writes")
        #expect(feed.position == repository.clock && feed.position.count == 3)
        #expect(repository.deltaReads == 1 && repository.snapshotReads == 1)
        try await expectSameAsRebuilt(feed, .maps, repository)
    }

    @Test func anAppendFromAnotherEpochIsLeftForARead() async throws {
        try await repository.add(variedChatt(1))
        _ = try await feeds.read(.chatts)
        // An operator's edit moved the epoch, its notice not yet here.
        repository.edit()
        let own = try await repository.add(variedChatt(2))
        #expect(own.position == CommitPosition(epoch: 2, count: 2) && own.previous == 1)
        feeds.append(own)
        #expect(feeds.currentFeed(.chatts) == nil)
        feeds.invalidate()
        let feed = try await feeds.read(.chatts)
        #expect(feed.rowCount == 2 && feed.position == CommitPosition(epoch: 2, count: 2))
    }

    @Test func aBatchTheFeedHoldsAlreadyLeavesItsBytesAndPosition() async throws {
        _ = try await feeds.read(.maps)
        let batch = try await repository.add(variedChatt(1))
        // Its notice came first (as from a listener that heard it) and a read caught up.
        feeds.chattsAdded()
        let caughtUp = try await feeds.read(.maps)
        #expect(caughtUp.position == batch.position)
        feeds.append(batch)
        let feed = try #require(feeds.currentFeed(.maps))
        #expect(feed.position == batch.position && feed.identity.etag == caughtUp.identity.etag)
    }

    @Test func aRowCommittedLateByAnotherWriterGoesInItsPlaceAmongTheNewest() async throws {
        for serial in 1...20 { try await repository.add(variedChatt(serial)) }
        _ = try await feeds.read(.maps)
        feeds.append(try await repository.add(variedChatt(21)))
        // Another process's transaction began before chatt 21's and committed after it: it sorts before 21.
        repository.storeCommitted(variedChatt(99), timestamp: "2026-03-25T08:11:59.100020Z")
        feeds.chattsAdded()
        let feed = try await feeds.read(.maps)
        #expect(repository.snapshotReads == 1 && repository.deltaReads == 1, "caught up, not read again")
        try await expectSameAsRebuilt(feed, .maps, repository)
    }

    @Test func aRowThatSortsAmongTheSettledOnesIsReadInFull() async throws {
        for serial in 1...40 { try await repository.add(variedChatt(serial)) }
        _ = try await feeds.read(.maps)
        repository.storeCommitted(variedChatt(99), timestamp: "2026-03-25T08:11:59.100002Z")
        feeds.chattsAdded()
        let feed = try await feeds.read(.maps)
        try await expectSameAsRebuilt(feed, .maps, repository)
        #expect(repository.deltaReads == 1 && repository.snapshotReads == 2 + 1, "the count told: read in full")
    }

    @Test func anAnnouncedInsertIsCaughtUpWithTheNewRowsOnly() async throws {
        for serial in 1...3 { try await repository.add(variedChatt(serial)) }
        _ = try await feeds.read(.chatts)
        for serial in 4...6 { try await repository.add(variedChatt(serial)) }
        feeds.chattsAdded()
        #expect(feeds.currentFeed(.chatts) == nil)
        try await expectSameAsRebuilt(try await feeds.read(.chatts), .chatts, repository)
        #expect(repository.snapshotReads == 1 + 1 && repository.deltaReads == 1)
        // Nothing new since: a catch-up that finds nothing keeps the same bytes.
        feeds.chattsAdded()
        let again = try await feeds.read(.chatts)
        #expect(again.identity.body.bytes == ChattRowEncoder.chattsRows(repository.chatts))
    }

    @Test func asManyNewRowsAsACatchUpTakesAreCaughtUpAndOneMoreIsReadInFull() async throws {
        let feeds = ChattFeed(repository: repository, catchUpLimit: 4)
        feeds.listening(true)
        _ = try await feeds.read(.chatts)
        for serial in 1...4 { try await repository.add(variedChatt(serial)) }
        feeds.chattsAdded()
        try await expectSameAsRebuilt(try await feeds.read(.chatts), .chatts, repository)
        #expect(repository.deltaReads == 1 && repository.snapshotReads == 1 + 1, "caught up")
        for serial in 5...9 { try await repository.add(variedChatt(serial)) }
        feeds.chattsAdded()
        try await expectSameAsRebuilt(try await feeds.read(.chatts), .chatts, repository)
        #expect(repository.deltaReads == 2 && repository.snapshotReads == 2 + 1 + 1, "a bulk insert: read in full")
    }

    @Test func aStaleFeedIsNotAppendedToButReadAfterwards() async throws {
        try await repository.add(variedChatt(1))
        _ = try await feeds.read(.maps)
        // An operator's DELETE was announced; a post then lands before anyone read.
        feeds.invalidate()
        feeds.append(try await repository.add(variedChatt(2)))
        #expect(feeds.currentFeed(.maps) == nil)
        try await expectSameAsRebuilt(try await feeds.read(.maps), .maps, repository)
        #expect(repository.snapshotReads == 2 + 1 && repository.deltaReads == 0, "an edit means a full read")
    }

    @Test func aPostIsInTheFeedBeforeItsAnswerEvenWhenTheFeedWasBeingRead() async throws {
        try await repository.add(variedChatt(1))
        let gate = repository.holdNextSnapshot()
        let leader = Task { [feeds] in _ = try? await feeds.read(.maps) }
        await gate.waitUntilEntered()
        // The post commits and is taken in while the read that began before it is still running.
        feeds.append(try await repository.add(variedChatt(2)))
        gate.release()
        await leader.value
        let feed = try await feeds.read(.maps)
        #expect(feed.rowCount == 2, "the older read must not be served after the post")
    }

    @Test func untrustedReadsServeTheAppendedFeedAfterTheVersionCheck() async throws {
        let untrusted = ChattFeed(repository: repository)
        try await repository.add(variedChatt(1))
        _ = try await untrusted.read(.maps)
        untrusted.append(try await repository.add(variedChatt(2)))
        let feed = try await untrusted.read(.maps)
        #expect(feed.rowCount == 2)
        #expect(repository.snapshotReads == 1 && repository.versionReads == 2)
        // A change the version shows and no one announced is still read in full.
        try await repository.add(variedChatt(3))
        #expect(try await untrusted.read(.maps).rowCount == 3)
        #expect(repository.snapshotReads == 2)
    }

    @Test func aLostNotificationFallsBackToTheVersionCheck() async throws {
        try await repository.add(variedChatt(1))
        _ = try await feeds.read(.maps)
        // Another process committed, then died before announcing it.
        try await repository.add(variedChatt(2))
        let store = try await repository.version(before: .now + .seconds(60))
        feeds.audit(storeVersion: store)
        #expect(feeds.currentFeed(.maps)?.rowCount == 1, "one check apart could be an announcement on its way")
        feeds.audit(storeVersion: store)
        #expect(feeds.currentFeed(.maps) == nil, "behind at two checks in a row: a notification was lost")
        let feed = try await feeds.read(.maps)
        #expect(feed.rowCount == 2)
        #expect(repository.deltaReads == 1 && repository.snapshotReads == 1, "caught up, the count checked")
        feeds.audit(storeVersion: store)
        feeds.audit(storeVersion: store)
        #expect(feeds.currentFeed(.maps) != nil, "in step: nothing to do")
    }

    @Test func aReadBetweenTwoChecksClearsTheSuspicion() async throws {
        try await repository.add(variedChatt(1))
        _ = try await feeds.read(.maps)
        try await repository.add(variedChatt(2))
        feeds.audit(storeVersion: try await repository.version(before: .now + .seconds(60)))
        // The announcement arrived after all, and a read caught up: then the store moved on again.
        feeds.chattsAdded()
        _ = try await feeds.read(.maps)
        try await repository.add(variedChatt(3))
        feeds.audit(storeVersion: try await repository.version(before: .now + .seconds(60)))
        #expect(feeds.currentFeed(.maps) != nil, "a counted read came between the two checks")
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
            feeds.append(try await repository.add(variedChatt(serial)))
            versions.append(try #require(feeds.currentFeed(.maps)))
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
        // Posts are taken in on threads of their own, as the store's loop takes them in, beside the readers' tasks.
        let posters = onThreads(4) { thread in
            for index in 0..<40 {
                repository.add(variedChatt(thread * 1000 + index)) { outcome in
                    if case .success(let batch) = outcome { feeds.append(batch) }
                }
            }
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
