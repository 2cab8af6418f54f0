import Foundation
import Logging
import Syscalls

/// A pipe whose write end a `LogWriter` writes to, and whose read end a test reads lines from.
public final class LogPipe {
    public let readFD: Int32
    public let writeFD: Int32
    private var unread: [UInt8] = []

    public init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0, "pipe() failed")
        readFD = fds[0]
        writeFD = fds[1]
    }

    // The descriptors are never closed: a LogWriter's thread or a server may still write after the test
    // ends, and a closed number is soon reused by another test's pipe, which then received a stranger's
    // lines (a logfmt line in a JSON test failed the suite once). A few descriptors per test are cheap.

    /// A logger writing here.
    public func logger(level: LogLevel = .debug, format: LogFormat = .logfmt, capacityBytes: Int = 1 << 20) -> Logger {
        Logger(level: level, format: format, writer: LogWriter(fd: writeFD, capacityBytes: capacityBytes))
    }

    /// The next `count` lines, waiting up to `seconds` for them; fewer if they do not come.
    public func lines(_ count: Int, within seconds: Double = 5) -> [String] {
        let deadline = Date().addingTimeInterval(seconds)
        var lines: [String] = []
        while lines.count < count {
            if let newline = unread.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: unread[..<newline], as: UTF8.self))
                unread.removeFirst(newline + 1)
                continue
            }
            let remaining = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
            guard remaining > 0 else { break }
            let ready = Self.checked { try Syscall.poll(readFD, for: POLLIN, timeoutMilliseconds: remaining) }
            guard ready != 0 else { break }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = Self.checked { try Syscall.run("read") { read(readFD, &buffer, buffer.count) } }
            guard count > 0 else { break }
            unread += buffer[..<count]
        }
        return lines
    }

    /// Fills the pipe with newline-terminated filler until a write would block; returns the bytes written.
    public func fill() -> Int {
        Self.checked { try Syscall.setNonBlocking(writeFD) }
        defer { Self.checked { try Syscall.setBlocking(writeFD) } }
        var total = 0
        for chunk in [[UInt8](repeating: UInt8(ascii: "x"), count: 4095) + [10], [10]] {
            // Until a write would block: the pipe is full.
            while true {
                let outcome = Self.checked { try Syscall.nonBlocking("write") { write(writeFD, chunk, chunk.count) } }
                guard case .done(let written) = outcome, written > 0 else { break }
                total += written
            }
        }
        return total
    }

    /// Reads and discards exactly `count` bytes (what `fill` wrote).
    public func drain(_ count: Int) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var left = count
        while left > 0 {
            let got = Self.checked { try Syscall.run("read") { read(readFD, &buffer, min(left, buffer.count)) } }
            guard got > 0 else { return }
            left -= got
        }
    }

    /// The result of `call`; a failed system call stops the test run, since a test cannot go on without its pipe.
    private static func checked<Result>(_ call: () throws -> Result) -> Result {
        do {
            return try call()
        } catch {
            fatalError("LogPipe: \(error)")
        }
    }
}
