// CPU time of one post and read of the cached /getmaps, the store in memory: see cost.sh.
import ChattFeed
import ChattModel
import Foundation

@main struct FeedBench {
    static func main() async {
        let args = CommandLine.arguments
        let rows = Int(args[1])!, batch = Int(args[2])!, iterations = Int(args[3])!, gzip = args[4] == "gzip"
        let runs = args.count > 5 ? Int(args[5])! : 1
        var samples: [Double] = []
        var bodyBytes = 0, gzipBytes = 0
        for _ in 0..<runs {
            let repository = BenchRepository(rows: rows)
            let cache = makeFeeds(repository)
            let first = await readFeed(cache, repository)
            _ = first.identity
            if gzip { _ = await first.gzipped() }
            for _ in 0..<iterations {
                let start = cpuNow()
                let feed = await postAndRead(repository, cache, batch)
                bodyBytes = feed.identity.body.count
                if gzip { gzipBytes = await feed.gzipped().body.count }
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
