import HTTPCore
import Testing

/// The address of a segment's first byte: equal addresses mean shared storage, not a copy.
func address(_ segment: ArraySlice<UInt8>) -> UnsafePointer<UInt8>? {
    segment.withUnsafeBufferPointer { $0.baseAddress }
}

/// Whether nothing but `segment` holds its storage (so ARC frees it with `segment`): a write then happens in
/// place, where a shared array would be copied first. When it is shared, `segment` is a copy afterwards: ask last.
func isSoleOwner(_ segment: inout ArraySlice<UInt8>) -> Bool {
    let before = address(segment)
    let after = segment.withUnsafeMutableBufferPointer { UnsafePointer($0.baseAddress) }
    return before == after
}

/// `ByteSegments.append(compacting:)`, as the feed's settled bytes and gzip output grow: appends share what came
/// before, merges keep the segments few and the copying bounded.
@Suite struct SegmentCompactionTests {
    @Test func theBytesAreEverythingAppendedInOrder() {
        var bytes = ByteSegments(Array("[first".utf8)[...])
        var expected = Array("[first".utf8)
        for round in 0..<500 {
            let piece = (0..<(round * 37 % 300)).map { UInt8(truncatingIfNeeded: $0 + round) }
            bytes.append(compacting: piece)
            expected += piece
            #expect(bytes.count == expected.count)
        }
        #expect(Array(bytes.segments.joined()) == expected)
        #expect(bytes.segments.allSatisfy { !$0.isEmpty })
    }

    @Test func theSegmentsKeptAreNeverMergedOrCopied() {
        // Small segments that any later one would be merged into, were they not kept.
        let kept: [ArraySlice<UInt8>] = (0..<5).map { Array(repeating: UInt8($0), count: 100)[...] }
        var bytes = ByteSegments(segments: kept)
        for round in 0..<50 { bytes.append(compacting: Array(repeating: 9, count: 10 + round * 40), keeping: kept.count) }
        #expect(zip(bytes.segments, kept).allSatisfy { address($0) == address($1) && $0.count == $1.count })
        #expect(bytes.segments.count > kept.count)
        #expect(bytes.count == 500 + (0..<50).reduce(0) { $0 + 10 + $1 * 40 })
    }

    @Test func segmentsMoreThanDoubleTowardsTheFrontSoTheyStayFew() {
        var bytes = ByteSegments(Array(repeating: 1, count: 1_000_000)[...])
        for _ in 0..<5_000 {
            bytes.append(compacting: Array(repeating: 2, count: 200))
            let sizes = bytes.segments.map(\.count)
            #expect(zip(sizes, sizes.dropFirst()).allSatisfy { $0 > 2 * $1 })
        }
        // 1 000 000 bytes read, then 1 000 000 appended in 200-byte pieces: log2(1 000 000 / 200) is about 12.
        #expect(bytes.segments.count <= 14)
    }

    @Test func noMergeMakesASegmentLongerThanTheLimitSoNoAppendCopiesMuch() {
        let piece = 64 * 1024
        var bytes = ByteSegments(Array(repeating: 1, count: 100)[...])
        for round in 0..<160 {
            bytes.append(compacting: Array(repeating: UInt8(truncatingIfNeeded: round), count: piece))
            #expect(bytes.segments.allSatisfy { $0.count <= ByteSegments.mergeLimit })
        }
        // 10 MiB: a few segments near the limit, then log2(limit / piece) = 6 at most below it.
        let limits = bytes.count / ByteSegments.mergeLimit
        #expect(bytes.segments.count <= 2 * (limits + 1) + 6, "\(bytes.segments.map(\.count))")
        #expect(bytes.count == 100 + 160 * piece)
    }

    @Test func appendingNeverCopiesTheFirstSegmentAndCopiesEachByteAFewTimes() {
        let first = Array(repeating: UInt8(1), count: 1_000_000)
        var bytes = ByteSegments(first[...])
        var copied = 0
        for _ in 0..<2_000 {
            let before = Set(bytes.segments.map(address))
            bytes.append(compacting: Array(repeating: 2, count: 250))
            // A segment not there before is the new piece itself, or a merge of older ones: the merge's bytes are
            // the copying.
            copied += bytes.segments.filter { !before.contains(address($0)) }.map(\.count).reduce(0, +) - 250
            #expect(address(bytes.segments[0]) == address(first[...]), "the bytes read are shared, never copied")
        }
        let appended = 2_000 * 250
        // log1.5(500 000 / 250) is about 19; in practice a binary counter copies each byte about log2 of it.
        #expect(copied < 12 * appended, "copied \(copied) bytes for \(appended) appended")
    }

    @Test func aMergeLeavesTheSegmentsItReplacedToWhoeverHoldsThem() {
        var bytes = ByteSegments(Array(repeating: UInt8(1), count: 1000)[...])
        bytes.append(compacting: Array(repeating: 2, count: 100))
        var held = bytes.segments[1]
        bytes.append(compacting: Array(repeating: 3, count: 60))  // at least half of 100: merged into it
        #expect(bytes.segments.map(\.count) == [1000, 160])
        #expect(address(bytes.segments[1]) != address(held), "the merge is a new segment")
        #expect(held.allSatisfy { $0 == 2 } && held.count == 100, "a version holding the old one still has its bytes")
        #expect(isSoleOwner(&held), "and only that version: ARC frees it with the version")
    }
}
