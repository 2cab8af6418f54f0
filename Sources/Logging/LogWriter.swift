import Foundation
import Syscalls

#if canImport(Glibc)
import Glibc
#endif

/// Collects finished log lines in memory and writes them to a file descriptor from one background thread, so a
/// thread that logs never makes a system call or waits on a slow reader.
///
/// Lines go out at least every `flushIntervalSeconds`, sooner once `wakeBytes` are pending, and at once on `flush()`.
/// At most `capacityBytes` wait: past that, lines are dropped and counted (`droppedLines`) rather than blocking,
/// because a stalled stderr (a full pipe, a hung journald) must not stall request handling.
// @unchecked Sendable: `pending`, `dropped`, `wakeRequested` and `stopped` are only touched holding `condition`.
public final class LogWriter: @unchecked Sendable {
    private let fd: Int32
    private let capacityBytes: Int
    private let wakeBytes: Int
    private let flushIntervalSeconds: Double
    private let condition = NSCondition()
    private var pending: [UInt8] = []
    private var dropped = 0
    private var wakeRequested = false
    private var stopped = false
    /// Held while taking and writing a batch, so batches from the thread and from `flush()` keep their order.
    private let writing = NSLock()

    /// Starts the background thread. Call `flush()` before the process exits.
    /// The default capacity holds about a second of access lines at 30k requests/s, for a writer thread starved of CPU.
    public init(
        fd: Int32 = STDERR_FILENO, capacityBytes: Int = 4 << 20, wakeBytes: Int = 64 << 10,
        flushIntervalSeconds: Double = 0.1
    ) {
        self.fd = fd
        self.capacityBytes = capacityBytes
        self.wakeBytes = min(wakeBytes, capacityBytes)
        self.flushIntervalSeconds = flushIntervalSeconds
        pending.reserveCapacity(self.wakeBytes)
        // The thread holds the writer until `stop()`; in chatterd that is the life of the process.
        let thread = Thread { self.run() }
        thread.name = "chatterd.log"
        thread.start()
    }

    /// Queues one finished line (newline included), or drops and counts it when the buffer is full.
    public func append(_ line: [UInt8]) {
        condition.lock()
        defer { condition.unlock() }
        guard pending.count + line.count <= capacityBytes else {
            dropped += 1
            return
        }
        pending.append(contentsOf: line)
        if pending.count >= wakeBytes && !wakeRequested {
            wakeRequested = true
            condition.signal()
        }
    }

    /// Lines dropped so far because the buffer was full.
    public var droppedLines: Int {
        condition.lock()
        defer { condition.unlock() }
        return dropped
    }

    /// Writes everything queued so far before returning (at exit, after a fatal error).
    public func flush() {
        writing.lock()
        defer { writing.unlock() }
        writeAll(takePending())
    }

    /// Writes what is queued and ends the background thread; later lines wait for an explicit `flush()`.
    public func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        var running = true
        while running {
            condition.lock()
            if !wakeRequested && !stopped {
                _ = condition.wait(until: Date(timeIntervalSinceNow: flushIntervalSeconds))
            }
            wakeRequested = false
            running = !stopped
            condition.unlock()
            flush()
        }
    }

    private func takePending() -> [UInt8] {
        condition.lock()
        defer { condition.unlock() }
        guard !pending.isEmpty else { return [] }
        var batch: [UInt8] = []
        batch.reserveCapacity(wakeBytes)
        swap(&batch, &pending)
        return batch
    }

    private func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                do {
                    let outcome = try Syscall.nonBlocking("write") {
                        Glibc.write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                    }
                    switch outcome {
                    case .done(let written) where written > 0:
                        offset += written
                    case .done:
                        return  // nothing taken: stderr will not take more
                    case .wouldBlock:
                        // A non-blocking stderr inherited from the parent: wait for room instead of spinning.
                        _ = try Syscall.poll(fd, for: POLLOUT, timeoutMilliseconds: 100)
                    }
                } catch {
                    return  // stderr closed or broken: nowhere left to report it
                }
            }
        }
    }
}
