import CEpoll
import Dispatch
import Locking
import Syscalls
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An epoll set over a real pipe: what it reports, on which queue, and what it stops reporting. No sleeps: each
/// test waits on the set's queue, or on a semaphore the handler signals.
@Suite struct EpollSetTests {
    private static func pipeEnds() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        try Syscall.run("pipe") { pipe(&fds) }
        return (fds[0], fds[1])
    }

    @Test func aReadableDescriptorIsReportedOnTheQueueAndAgainWhileLevelTriggeredInputWaits() throws {
        let (readEnd, writeEnd) = try Self.pipeEnds()
        defer { close(readEnd); close(writeEnd) }
        let queue = DispatchQueue(label: "test.epoll")
        let set = try EpollSet(batch: 4)
        let reported = Locked([Int32]())
        let told = DispatchSemaphore(value: 0)
        set.start(on: queue) { event in
            dispatchPrecondition(condition: .onQueue(queue))
            reported.withLock { $0.append(event.data.fd) }
            told.signal()
        }
        try set.control(EPOLL_CTL_ADD, readEnd, events: EPOLLIN.rawValue)
        try Syscall.run("write") { write(writeEnd, "x", 1) }
        told.wait()
        // Level-triggered and nothing read: the set still has it ready for the next wake-up.
        told.wait()
        try queue.sync { try set.control(EPOLL_CTL_DEL, readEnd) }
        #expect(reported.withLock { $0.allSatisfy { $0 == readEnd } && $0.count >= 2 })
    }

    @Test func refusingAClosedDescriptorThrowsNamingTheCall() throws {
        let set = try EpollSet(batch: 4)
        #expect(throws: SyscallError.self) { try set.control(EPOLL_CTL_ADD, -1, events: EPOLLIN.rawValue) }
    }
}
