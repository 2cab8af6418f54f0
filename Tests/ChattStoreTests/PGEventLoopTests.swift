@testable import ChattStore
import Dispatch
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The store's loop over real pipes: no database, no sleeps.
@Suite struct PGEventLoopTests {
    private static func pipeEnds() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0, "pipe")
        return (fds[0], fds[1])
    }

    @Test func aSocketClosedWithoutUnwatchingLeavesItsNumberFreeForTheNextToBeWatched() {
        let loop = PGEventLoop()
        let first = Self.pipeEnds()
        let told = DispatchSemaphore(value: 0)
        let watchedFirst = loop.queue.sync { loop.watch(first.read, writable: false) {} }
        #expect(watchedFirst)
        // Closed under the loop, as libpq closes a failed connection's socket before its owner hears of it, and the
        // number given to the next one, as the kernel hands out the lowest free number: at once (dup2), so that no
        // file another test opens meanwhile takes the number in between.
        let fresh = Self.pipeEnds()
        #expect(dup2(fresh.read, first.read) == first.read)
        close(fresh.read)
        close(first.write)
        let second = (read: first.read, write: fresh.write)
        defer { close(second.read); close(second.write) }
        let watchedSecond = loop.queue.sync { loop.watch(second.read, writable: false) { told.signal() } }
        #expect(watchedSecond)
        _ = write(second.write, "x", 1)
        told.wait()
        loop.queue.sync { loop.unwatch(second.read) }
    }

    @Test func aDeadlineFiresOnTheLoopAndACancelledOneNever() {
        let loop = PGEventLoop()
        let fired = DispatchSemaphore(value: 0)
        loop.queue.sync {
            let cancelled = loop.timers.schedule(at: .now) { Issue.record("a cancelled deadline fired") }
            loop.timers.cancel(cancelled)
            loop.timers.schedule(at: .now) {
                dispatchPrecondition(condition: .onQueue(loop.queue))
                fired.signal()
            }
        }
        fired.wait()
        #expect(loop.queue.sync { loop.timers.armedCount } == 0)
    }
}
