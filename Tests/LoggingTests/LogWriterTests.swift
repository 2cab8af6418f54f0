import Foundation
@testable import Logging
import Testing
import TestSupport

@Suite struct LogWriterTests {
    @Test func linesArriveWholeAndInOrderWithoutAnExplicitFlush() {
        let pipe = LogPipe()
        let writer = LogWriter(fd: pipe.writeFD)
        defer { writer.stop() }
        for index in 0..<1000 { writer.append(Array("line \(index)\n".utf8)) }
        // The background thread writes within its flush interval; nothing here calls flush().
        let lines = pipe.lines(1000)
        #expect(lines == (0..<1000).map { "line \($0)" })
    }

    @Test func linesFromManyThreadsNeverInterleave() {
        let pipe = LogPipe()
        let writer = LogWriter(fd: pipe.writeFD)
        defer { writer.stop() }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<500 { writer.append(Array("t\(thread) \(index) \(String(repeating: "x", count: 100))\n".utf8)) }
        }
        // No flush() here: with nobody reading yet, it would wait on the full pipe.
        let lines = pipe.lines(4000)
        #expect(lines.count == 4000)
        #expect(lines.allSatisfy { $0.wholeMatch(of: #/t\d \d+ x{100}/#) != nil })
        for thread in 0..<8 {
            let own = lines.filter { $0.hasPrefix("t\(thread) ") }.map { $0.split(separator: " ")[1] }
            #expect(own == (0..<500).map { Substring(String($0)) }, "thread \(thread) out of order")
        }
    }

    @Test func aBlockedOutputDropsAndCountsLinesInsteadOfBlockingTheCaller() {
        let pipe = LogPipe()
        let filler = pipe.fill()
        let writer = LogWriter(fd: pipe.writeFD, capacityBytes: 1000, wakeBytes: 100)
        defer { writer.stop() }
        let line = Array((String(repeating: "y", count: 99) + "\n").utf8)
        // 100 lines = 10 000 bytes; at most 1000 wait in the buffer and one batch (≤ 1000) sits in a blocked write.
        for _ in 0..<100 { writer.append(line) }
        let dropped = writer.droppedLines
        #expect(dropped >= 80, "dropped \(dropped)")
        pipe.drain(filler)
        writer.flush()
        // Once the reader catches up, every line kept arrives whole, and the count stays.
        let delivered = pipe.lines(100 - dropped, within: 5)
        #expect(delivered.count == 100 - dropped)
        #expect(delivered.allSatisfy { $0 == String(repeating: "y", count: 99) })
        #expect(writer.droppedLines == dropped)
    }

    @Test func flushWritesEverythingBeforeReturning() {
        let pipe = LogPipe()
        let writer = LogWriter(fd: pipe.writeFD, flushIntervalSeconds: 3600)
        defer { writer.stop() }
        writer.append(Array("last words\n".utf8))
        writer.flush()
        #expect(pipe.lines(1, within: 0.5) == ["last words"])
    }
}
