@testable import ChattStore
import Testing

/// The pool's bookkeeping on a made-up clock, with connections named by strings: no database, no sleeps.
@Suite struct PoolMachineTests {
    private static let start = ContinuousClock.now
    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { Self.start + .milliseconds(milliseconds) }
    private typealias Machine = PoolMachine<String>

    @Test func theFirstLeaseOpensAConnectionAndGetsItWhenItIsReady() {
        var pool = Machine(size: 2)
        #expect(pool.leaseConnection(1, deadline: at(2000), at: at(0)) == [.armTimer(1, at(2000)), .connect])
        #expect(pool.inUse == 1 && pool.waiting == 1)
        #expect(pool.connected("a", at: at(5)) == [.cancelTimer(1), .grant(1, "a")])
        #expect(pool.inUse == 1 && pool.waiting == 0)
    }

    @Test func aReturnedConnectionIsLentAgainWithoutAConnect() {
        var pool = Machine(size: 2)
        _ = pool.leaseConnection(1, deadline: at(2000), at: at(0))
        _ = pool.connected("a", at: at(5))
        #expect(pool.connectionReleased("a", reusable: true, at: at(10)) == [])
        #expect(pool.idle == ["a"] && pool.inUse == 0)
        #expect(pool.leaseConnection(2, deadline: at(2000), at: at(20)) == [.grant(2, "a")])
    }

    @Test func theMostRecentlyReturnedIdleConnectionIsLentFirst() {
        var pool = Machine(size: 2)
        _ = pool.leaseConnection(1, deadline: at(2000), at: at(0))
        _ = pool.leaseConnection(2, deadline: at(2000), at: at(0))
        _ = pool.connected("a", at: at(1))
        _ = pool.connected("b", at: at(2))
        _ = pool.connectionReleased("a", reusable: true, at: at(3))
        _ = pool.connectionReleased("b", reusable: true, at: at(4))
        #expect(pool.leaseConnection(3, deadline: at(2000), at: at(5)) == [.grant(3, "b")])
    }

    @Test func aFullPoolQueuesCallersFirstComeFirstServed() {
        var pool = Machine(size: 1)
        _ = pool.leaseConnection(1, deadline: at(2000), at: at(0))
        _ = pool.connected("a", at: at(1))
        #expect(pool.leaseConnection(2, deadline: at(2000), at: at(2)) == [.armTimer(2, at(2000))])
        #expect(pool.leaseConnection(3, deadline: at(1000), at: at(3)) == [.armTimer(3, at(1000))])
        #expect(pool.waiting == 2)
        #expect(pool.connectionReleased("a", reusable: true, at: at(4)) == [.cancelTimer(2), .grant(2, "a")])
        #expect(pool.connectionReleased("a", reusable: true, at: at(5)) == [.cancelTimer(3), .grant(3, "a")])
    }

    @Test func aCallerStillWaitingAtItsDeadlineTimesOutAndLeavesTheLine() {
        var pool = Machine(size: 1)
        _ = pool.leaseConnection(1, deadline: at(2000), at: at(0))
        _ = pool.connected("a", at: at(1))
        _ = pool.leaseConnection(2, deadline: at(2000), at: at(2))
        #expect(pool.waitExpired(2) == [.fail(2, StoreError(.poolTimeout))])
        #expect(pool.waiting == 0)
        #expect(pool.waitExpired(2) == [], "a timer that fires after the grant changes nothing")
        #expect(pool.connectionReleased("a", reusable: true, at: at(3)) == [])
        #expect(pool.idle == ["a"])
    }

    @Test func aBrokenConnectionIsClosedAndAWaitingCallerGetsANewOne() {
        var pool = Machine(size: 1)
        _ = pool.leaseConnection(1, deadline: at(2000), at: at(0))
        _ = pool.connected("a", at: at(1))
        _ = pool.leaseConnection(2, deadline: at(2000), at: at(2))
        #expect(pool.connectionReleased("a", reusable: false, at: at(3)) == [.close("a"), .connect])
        #expect(pool.connected("b", at: at(4)) == [.cancelTimer(2), .grant(2, "b")])
        #expect(pool.inUse == 1 && pool.idle.isEmpty)
    }

    @Test func aGrantedConnectionFoundDeadIsReplacedAndTheCallerKeepsItsPlace() {
        var pool = Machine(size: 2)
        _ = pool.leaseConnection(1, deadline: at(2000), at: at(0))
        _ = pool.connected("a", at: at(1))
        _ = pool.connectionReleased("a", reusable: true, at: at(2))
        #expect(pool.leaseConnection(2, deadline: at(2000), at: at(3)) == [.grant(2, "a")])
        #expect(pool.grantedConnectionDead("a", 2, deadline: at(2000), at: at(3)) == [
            .close("a"), .armTimer(2, at(2000)), .connect,
        ])
        #expect(pool.connected("b", at: at(4)) == [.cancelTimer(2), .grant(2, "b")])
    }

    @Test func aFailedConnectFailsTheFirstCallerThenOthersFailFastWhileBackingOff() {
        var pool = Machine(size: 4)
        _ = pool.leaseConnection(1, deadline: at(2000), at: at(0))
        let failure = StoreError(.connectFailed)
        #expect(pool.connectFailed(failure, at: at(10)) == [.cancelTimer(1), .fail(1, failure)])
        #expect(pool.leaseConnection(2, deadline: at(2000), at: at(20)) == [.fail(2, StoreError(.backingOff))])
        #expect(pool.inUse == 0 && pool.waiting == 0)
        // Past the first back-off (0.1 s) one caller probes again; another meanwhile still fails fast.
        #expect(pool.leaseConnection(3, deadline: at(2000), at: at(110)) == [.armTimer(3, at(2000)), .connect])
        #expect(pool.leaseConnection(4, deadline: at(2000), at: at(111)) == [.fail(4, StoreError(.backingOff))])
        #expect(pool.connected("a", at: at(120)) == [.cancelTimer(3), .grant(3, "a")])
        #expect(pool.leaseConnection(5, deadline: at(2000), at: at(121)) == [.armTimer(5, at(2000)), .connect])
    }

    @Test func whenAConnectFailsAndNothingElseCouldServeTheLineEveryoneWaitingIsTold() {
        var pool = Machine(size: 1)
        _ = pool.leaseConnection(1, deadline: at(2000), at: at(0))
        _ = pool.leaseConnection(2, deadline: at(2000), at: at(1))
        let failure = StoreError(.connectFailed)
        #expect(pool.connectFailed(failure, at: at(10)) == [
            .cancelTimer(1), .fail(1, failure), .cancelTimer(2), .fail(2, StoreError(.backingOff)),
        ])
        #expect(pool.inUse == 0 && pool.waiting == 0)
    }

    @Test func callersBeyondTheConnectsInFlightStartMoreUpToTheSize() {
        var pool = Machine(size: 2)
        #expect(pool.leaseConnection(1, deadline: at(2000), at: at(0)) == [.armTimer(1, at(2000)), .connect])
        #expect(pool.leaseConnection(2, deadline: at(2000), at: at(0)) == [.armTimer(2, at(2000)), .connect])
        #expect(pool.leaseConnection(3, deadline: at(2000), at: at(0)) == [.armTimer(3, at(2000))])
        #expect(pool.inUse == 2)
    }

    @Test func aConnectWhoseCallerGaveUpGoesToTheNextInLineOrIdle() {
        var pool = Machine(size: 1)
        _ = pool.leaseConnection(1, deadline: at(500), at: at(0))
        #expect(pool.waitExpired(1) == [.fail(1, StoreError(.poolTimeout))])
        // The connect in flight still counts, so a new caller does not start a second one on a pool of one.
        #expect(pool.leaseConnection(2, deadline: at(2000), at: at(600)) == [.armTimer(2, at(2000))])
        #expect(pool.connected("a", at: at(700)) == [.cancelTimer(2), .grant(2, "a")])
        _ = pool.connectionReleased("a", reusable: true, at: at(800))
        #expect(pool.idle == ["a"])
    }

    @Test func closingClosesIdleConnectionsFailsTheLineAndLentOnesOnReturn() {
        var pool = Machine(size: 2)
        _ = pool.leaseConnection(1, deadline: at(2000), at: at(0))
        _ = pool.leaseConnection(2, deadline: at(2000), at: at(0))
        _ = pool.connected("a", at: at(1))
        _ = pool.connected("b", at: at(1))
        _ = pool.connectionReleased("a", reusable: true, at: at(2))
        _ = pool.leaseConnection(3, deadline: at(2000), at: at(3))
        _ = pool.leaseConnection(4, deadline: at(2000), at: at(3))
        #expect(pool.close() == [.cancelTimer(4), .fail(4, StoreError(.poolClosed))])
        #expect(pool.connectionReleased("b", reusable: true, at: at(4)) == [.close("b")])
        #expect(pool.leaseConnection(5, deadline: at(2000), at: at(5)) == [.fail(5, StoreError(.poolClosed))])
        #expect(pool.connectionReleased("a", reusable: true, at: at(6)) == [.close("a")])
        #expect(pool.inUse == 0 && pool.idle.isEmpty)
    }

    @Test func aConnectThatEndsAfterClosingIsClosed() {
        var pool = Machine(size: 1)
        _ = pool.leaseConnection(1, deadline: at(2000), at: at(0))
        #expect(pool.close() == [.cancelTimer(1), .fail(1, StoreError(.poolClosed))])
        #expect(pool.connected("a", at: at(1)) == [.close("a")])
        #expect(pool.inUse == 0)
    }
}
