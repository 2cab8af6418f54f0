// How a cached /getmaps made of shared segments grows as posts go on, the store in memory: see segments.sh.
import ChattFeed
import ChattModel
import Foundation
import HTTPCore

/// The segments a version shares with later ones: its body less its tail and `]`, its gzip form less its finish.
struct SharedParts {
    let identity: [ArraySlice<UInt8>]
    let gzip: [ArraySlice<UInt8>]

    init(_ feed: EncodedFeed) async {
        identity = Array(feed.identity.body.segments.dropLast(2))
        gzip = Array(await feed.gzipped().body.segments.dropLast())
    }
}

/// Bytes in `next` that are not in `previous`'s segments, less the bytes `next` added: what merges copied.
func mergeCopies(_ previous: [ArraySlice<UInt8>], _ next: [ArraySlice<UInt8>]) -> (copied: Int, added: Int) {
    let known = Set(previous.map { $0.withUnsafeBufferPointer { $0.baseAddress } })
    let fresh = next.filter { !known.contains($0.withUnsafeBufferPointer { $0.baseAddress }) }
    let added = next.map(\.count).reduce(0, +) - previous.map(\.count).reduce(0, +)
    return (fresh.map(\.count).reduce(0, +) - added, added)
}

@main struct SegmentsBench {
    static func main() async {
        let args = CommandLine.arguments
        let rows = Int(args[1])!, batch = Int(args[2])!, posts = Int(args[3])!
        let repository = BenchRepository(rows: rows)
        let cache = makeFeeds(repository)
        var parts = await SharedParts(readFeed(cache, repository))
        var copied = (identity: 0, gzip: 0), added = (identity: 0, gzip: 0), most = (identity: 0, gzip: 0)
        var samples: [Double] = []
        for _ in 0..<posts {
            // The in-memory store's own growth (copying its array of rows now and then) is not the feed's cost.
            let rows = storeBatch(repository, batch)
            let start = cpuNow()
            await takeIn(rows, repository, cache)
            let feed = await readFeed(cache, repository)
            _ = await feed.gzipped()
            samples.append(cpuNow() - start)
            let next = await SharedParts(feed)
            let identity = mergeCopies(parts.identity, next.identity), gzip = mergeCopies(parts.gzip, next.gzip)
            copied = (copied.identity + identity.copied, copied.gzip + gzip.copied)
            added = (added.identity + identity.added, added.gzip + gzip.added)
            most = (max(most.identity, next.identity.count), max(most.gzip, next.gzip.count))
            parts = next
        }
        samples.sort()
        print(String(
            format: "rows %d, %d posts of %d: segments now %d identity, %d gzip (at most %d, %d); merges copied %.2f × the bytes settled (identity), %.2f × (gzip); taking a post in and reading both forms: median %.3f ms, p90 %.3f ms, max %.3f ms",
            rows, posts, batch, parts.identity.count, parts.gzip.count, most.identity, most.gzip,
            Double(copied.identity) / Double(max(1, added.identity)), Double(copied.gzip) / Double(max(1, added.gzip)),
            samples[samples.count / 2] * 1e3, samples[samples.count * 9 / 10] * 1e3, samples[samples.count - 1] * 1e3))
    }
}
