// CPU time of one post and read of the cached /getmaps, the store in memory: see cost.sh.
import ChattFeed
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
        geodata: "[42.2936,-83.7166,\"North\",\"walking\"]")
}

func cpuNow() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

@main struct FeedBench {
    static func main() {
        let args = CommandLine.arguments
        let rows = Int(args[1])!, batch = Int(args[2])!, iterations = Int(args[3])!, gzip = args[4] == "gzip"
        let runs = args.count > 5 ? Int(args[5])! : 1
        var samples: [Double] = []
        var bodyBytes = 0, gzipBytes = 0
        for _ in 0..<runs {
            let repository = BenchRepository(rows: rows)
            let cache = ChattFeedCache()
            cache.setNotificationsTrusted(true)
            let first = try! cache.feed(.maps, from: repository)
            _ = first.identity
            if gzip { _ = first.gzipped() }
            for _ in 0..<iterations {
                let start = cpuNow()
                let feed = postAndRead(repository, cache, batch)
                bodyBytes = feed.identity.body.count
                if gzip { gzipBytes = feed.gzipped().body.count }
                samples.append(cpuNow() - start)
            }
        }
        samples.sort()
        if !samples.isEmpty {
            print(String(format: "rows %d batch %d %@: per post+read median %.3f ms p90 %.3f ms (n=%d) body %d gzip %d",
                         rows, batch, gzip ? "identity+gzip" : "identity", samples[samples.count / 2] * 1e3,
                         samples[samples.count * 9 / 10] * 1e3, samples.count, bodyBytes, gzipBytes))
        }
    }
}
