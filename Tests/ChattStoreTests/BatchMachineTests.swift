@testable import ChattStore
import Testing

/// The group commit's bookkeeping on a made-up clock, with inserts named by strings and settled batches by their
/// numbers: no database, no sleeps.
@Suite struct BatchMachineTests {
    private static let start = ContinuousClock.now
    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { Self.start + .milliseconds(milliseconds) }
    private typealias Machine = BatchMachine<String, Int, String>

    private func machine(batchSize: Int = 500, queued: Int = 4096, inFlight: Int = 4) -> Machine {
        Machine(
            maximumBatchSize: batchSize, maximumQueued: queued, maximumInFlight: inFlight,
            waitLimit: .seconds(2), writeLimit: .seconds(5))
    }

    @Test func aLonePostStartsABatchAtOnceWithNoTimerButItsWait() {
        var batcher = machine()
        #expect(batcher.enqueue("a", at: at(0)) == [.armExpiry(at(2000)), .leaseConnection])
        #expect(batcher.connectionGranted("c") == [
            .write(number: 0, inserts: ["a"], deadline: at(7000), connection: "c"), .cancelExpiry,
        ])
        #expect(batcher.batchInserted(0) == [])
        #expect(batcher.batchInserted(0) == [], "told twice, it starts nothing twice")
        #expect(batcher.batchSettled(0, 0) == [.complete([0])])
        #expect(batcher.inFlight == 0 && !batcher.isWriting)
    }

    @Test func postsArrivingWhileTheBatchWaitsForItsConnectionJoinIt() {
        var batcher = machine()
        _ = batcher.enqueue("a", at: at(0))
        #expect(batcher.enqueue("b", at: at(1)) == [], "one batch is being started: no second lease, one timer")
        #expect(batcher.enqueue("c", at: at(2)) == [])
        #expect(batcher.connectionGranted("c") == [
            .write(number: 0, inserts: ["a", "b", "c"], deadline: at(7000), connection: "c"), .cancelExpiry,
        ])
    }

    @Test func aBatchTakesAtMostItsSizeOldestFirstAndTheRestWaitForTheNext() {
        var batcher = machine(batchSize: 2)
        _ = batcher.enqueue("a", at: at(0))
        _ = batcher.enqueue("b", at: at(1))
        _ = batcher.enqueue("c", at: at(2))
        #expect(batcher.connectionGranted("c") == [
            .write(number: 0, inserts: ["a", "b"], deadline: at(7000), connection: "c"),
        ])
        #expect(batcher.queuedCount == 1)
        #expect(batcher.batchInserted(0) == [.leaseConnection], "the next batch starts once the rows are in")
        #expect(batcher.connectionGranted("c") == [
            .write(number: 1, inserts: ["c"], deadline: at(7002), connection: "c"), .cancelExpiry,
        ])
    }

    @Test func theNextBatchWaitsUntilTheOneBeingWrittenHasItsRowsIn() {
        var batcher = machine()
        _ = batcher.enqueue("a", at: at(0))
        _ = batcher.connectionGranted("c")
        #expect(batcher.enqueue("b", at: at(1)) == [.armExpiry(at(2001))])
        #expect(batcher.batchInserted(0) == [.leaseConnection])
    }

    @Test func batchesSettledOutOfOrderAreAnsweredInOrder() {
        var batcher = machine()
        _ = batcher.enqueue("a", at: at(0))
        _ = batcher.connectionGranted("c")
        _ = batcher.enqueue("b", at: at(1))
        _ = batcher.batchInserted(0)
        _ = batcher.connectionGranted("c")
        _ = batcher.batchInserted(1)
        #expect(batcher.inFlight == 2)
        #expect(batcher.batchSettled(1, 1) == [], "batch 1 committed first: it waits for batch 0")
        #expect(batcher.batchSettled(0, 0) == [.complete([0, 1])])
        #expect(batcher.inFlight == 0)
    }

    @Test func noMoreThanTheLimitOfBatchesAreInFlight() {
        var batcher = machine(batchSize: 1, inFlight: 2)
        _ = batcher.enqueue("a", at: at(0))
        _ = batcher.enqueue("b", at: at(0))
        _ = batcher.enqueue("c", at: at(0))
        _ = batcher.connectionGranted("c")
        #expect(batcher.batchInserted(0) == [.leaseConnection])
        _ = batcher.connectionGranted("c")
        #expect(batcher.batchInserted(1) == [], "two in flight: the third waits for a commit")
        #expect(batcher.batchSettled(0, 0) == [.complete([0]), .leaseConnection])
    }

    @Test func pastTheQueueLimitAPostIsRefusedAtOnce() {
        var batcher = machine(queued: 2)
        _ = batcher.enqueue("a", at: at(0))
        _ = batcher.enqueue("b", at: at(0))
        #expect(batcher.enqueue("c", at: at(0)) == [.refuse("c")])
        #expect(batcher.queuedCount == 2)
    }

    @Test func postsStillQueuedAtTheirWaitLimitGiveUpWhileEveryBatchIsStuck() {
        var batcher = machine(batchSize: 1, inFlight: 1)
        _ = batcher.enqueue("a", at: at(0))
        _ = batcher.connectionGranted("c")
        _ = batcher.batchInserted(0)
        #expect(batcher.enqueue("b", at: at(100)) == [.armExpiry(at(2100))])
        _ = batcher.enqueue("c", at: at(900))
        #expect(batcher.waitsExpired(at: at(2100)) == [
            .fail(["b"], StoreError(.poolTimeout)), .armExpiry(at(2900)),
        ])
        #expect(batcher.waitsExpired(at: at(2900)) == [.fail(["c"], StoreError(.poolTimeout))])
        #expect(batcher.queuedCount == 0)
    }

    @Test func anExpiryThatFiresEarlyFailsNothingAndArmsAgain() {
        var batcher = machine(batchSize: 1, inFlight: 1)
        _ = batcher.enqueue("a", at: at(0))
        _ = batcher.connectionGranted("c")
        _ = batcher.enqueue("b", at: at(50))
        #expect(batcher.waitsExpired(at: at(1999)) == [.armExpiry(at(2050))])
    }

    @Test func noConnectionFailsEveryoneQueuedAndLetsTheNextPostStartAgain() {
        var batcher = machine()
        _ = batcher.enqueue("a", at: at(0))
        _ = batcher.enqueue("b", at: at(1))
        let failure = StoreError(.connectFailed)
        #expect(batcher.connectionRefused(failure) == [.fail(["a", "b"], failure), .cancelExpiry])
        #expect(batcher.inFlight == 0 && !batcher.isWriting)
        #expect(batcher.enqueue("c", at: at(2)) == [.armExpiry(at(2002)), .leaseConnection])
    }

    @Test func aConnectionGrantedAfterEveryPostGaveUpIsReturned() {
        var batcher = machine()
        _ = batcher.enqueue("a", at: at(0))
        #expect(batcher.waitsExpired(at: at(2000)) == [.fail(["a"], StoreError(.poolTimeout))])
        #expect(batcher.connectionGranted("c") == [.returnConnection("c")])
        #expect(batcher.inFlight == 0 && !batcher.isWriting)
    }

    @Test func aBatchWriteGivesUpTheWriteLimitAfterItsOldestPostsWaitWouldEnd() {
        var batcher = machine()
        _ = batcher.enqueue("a", at: at(300))
        _ = batcher.enqueue("b", at: at(900))
        #expect(batcher.connectionGranted("c") == [
            .write(number: 0, inserts: ["a", "b"], deadline: at(7300), connection: "c"), .cancelExpiry,
        ])
    }

    @Test func aBatchThatSettlesWithoutItsRowsInLetsTheNextStart() {
        var batcher = machine(batchSize: 1)
        _ = batcher.enqueue("a", at: at(0))
        _ = batcher.enqueue("b", at: at(0))
        _ = batcher.connectionGranted("c")
        #expect(batcher.batchSettled(0, 0) == [.leaseConnection, .complete([0])], "it failed before its rows were in")
        #expect(batcher.batchInserted(0) == [], "a late word of it changes nothing")
    }
}
