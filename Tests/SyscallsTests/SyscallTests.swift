import Syscalls
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The helpers against real descriptors: a pipe and a socket pair, closed at the end of each test.
@Suite struct SyscallTests {
    private final class Pipe {
        let read: Int32
        let write: Int32

        init() throws {
            var fds: [Int32] = [0, 0]
            try Syscall.run("pipe") { pipe(&fds) }
            (read, write) = (fds[0], fds[1])
        }

        deinit {
            close(read)
            close(write)
        }
    }

    private func statusFlags(_ fd: Int32) throws -> Int32 {
        try Syscall.run("fcntl F_GETFL") { fcntl(fd, F_GETFL) }
    }

    @Test func aFailureNamesTheCallAndItsErrno() {
        #expect(throws: SyscallError("close", errno: EBADF)) { try Syscall.run("close") { close(-1) } }
        #expect(SyscallError("close", errno: EBADF).description == "close: Bad file descriptor")
    }

    @Test func nonBlockingIsSetAndCleared() throws {
        let pipe = try Pipe()
        try Syscall.setNonBlocking(pipe.read)
        #expect(try statusFlags(pipe.read) & O_NONBLOCK != 0)
        try Syscall.setBlocking(pipe.read)
        #expect(try statusFlags(pipe.read) & O_NONBLOCK == 0)
    }

    @Test func anEmptyNonBlockingReadWouldBlock() throws {
        let pipe = try Pipe()
        try Syscall.setNonBlocking(pipe.read)
        var byte: UInt8 = 0
        #expect(try Syscall.nonBlocking("read") { read(pipe.read, &byte, 1) } == .wouldBlock)
        _ = try Syscall.run("write") { write(pipe.write, "x", 1) }
        #expect(try Syscall.nonBlocking("read") { read(pipe.read, &byte, 1) } == .done(1))
    }

    @Test func pollReportsReadinessAndTimesOutWithNone() throws {
        let pipe = try Pipe()
        #expect(try Syscall.poll(pipe.read, for: POLLIN, timeoutMilliseconds: 0) == 0)
        #expect(try Syscall.poll(pipe.write, for: POLLOUT, timeoutMilliseconds: 0) & POLLOUT != 0)
        _ = try Syscall.run("write") { write(pipe.write, "x", 1) }
        #expect(try Syscall.poll(pipe.read, for: POLLIN, timeoutMilliseconds: -1) & POLLIN != 0)
    }

    @Test func socketTimeoutsAndPendingErrorsReadBack() throws {
        var fds: [Int32] = [0, 0]
        try Syscall.run("socketpair") { socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) }
        defer { fds.forEach { close($0) } }
        try Syscall.setTimeout(fds[0], SO_RCVTIMEO, seconds: 2.5, name: "SO_RCVTIMEO")
        var limit = timeval()
        var length = socklen_t(MemoryLayout<timeval>.size)
        try Syscall.run("getsockopt") { getsockopt(fds[0], SOL_SOCKET, SO_RCVTIMEO, &limit, &length) }
        #expect(limit.tv_sec == 2 && limit.tv_usec == 500_000)
        #expect(try Syscall.pendingError(fds[0]) == 0)
        #expect(throws: SyscallError("setsockopt SO_SNDTIMEO", errno: EBADF)) {
            try Syscall.setTimeout(-1, SO_SNDTIMEO, seconds: 1, name: "SO_SNDTIMEO")
        }
    }
}
