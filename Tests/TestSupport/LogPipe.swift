import Foundation
import Logging

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
            var ready = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
            guard remaining > 0, poll(&ready, 1, remaining) == 1 else { break }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = read(readFD, &buffer, buffer.count)
            guard count > 0 else { break }
            unread += buffer[..<count]
        }
        return lines
    }

    /// Fills the pipe with newline-terminated filler until a write would block; returns the bytes written.
    public func fill() -> Int {
        let flags = fcntl(writeFD, F_GETFL)
        _ = fcntl(writeFD, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(writeFD, F_SETFL, flags) }
        var total = 0
        for chunk in [[UInt8](repeating: UInt8(ascii: "x"), count: 4095) + [10], [10]] {
            while case let written = write(writeFD, chunk, chunk.count), written > 0 { total += written }
        }
        return total
    }

    /// Reads and discards exactly `count` bytes (what `fill` wrote).
    public func drain(_ count: Int) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var left = count
        while left > 0 {
            let got = read(readFD, &buffer, min(left, buffer.count))
            guard got > 0 else { return }
            left -= got
        }
    }
}
