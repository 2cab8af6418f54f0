// What both feed programs share (see cost.sh): the rows posted, and the CPU clock.
import ChattModel
import Foundation

func makeRow(_ i: Int) -> StoredChatt {
    var g = SystemRandomNumberGenerator()
    let hex = { (n: Int) in (0..<n).map { _ in String(Int.random(in: 0..<16, using: &g), radix: 16) }.joined() }
    let id = "\(hex(8))-\(hex(4))-4\(hex(3))-8\(hex(3))-\(hex(12))"
    let us = 100_000 + i % 900_000
    return StoredChatt(
        name: "user\(i % 100)", message: "message number \(i) from the benchmark", id: id,
        timestamp: "2026-03-25T08:\(String(format: "%02d", (i / 1_000_000) % 60)):59.\(us)Z",
        geodata: benchGeodata)
}

/// The process's CPU time: a feed read is an async call, which may run on any of the runtime's threads.
func cpuNow() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

/// Where every chatt of the benchmark was posted from.
let benchGeodata = "[42.2936,-83.7166,\"North\",\"walking\"]"
