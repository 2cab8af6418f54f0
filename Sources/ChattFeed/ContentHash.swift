import ChattModel
import HTTPCore
import JSON

/// A fast 64-bit hash of bytes, for entity tags: the same bytes give the same value in every process, so
/// servers sharing one database give one feed one tag. Not cryptographic; it only has to tell feeds apart.
enum ContentHash {
    fileprivate static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    fileprivate static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    fileprivate static let prime3: UInt64 = 0x1656_67B1_9E37_79F9

    /// `value` as 16 lower-case hex digits.
    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The hash of `bytes`.
    static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { hash($0) }
    }

    /// The hash of `bytes`: a `ContentHasher` fed them at once.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = ContentHasher()
        hasher.update(bytes)
        return hasher.finalize()
    }
}

/// `ContentHash` over bytes that arrive in pieces: any split of the same bytes gives the same value as hashing
/// them at once, so a feed that grows by appends costs only its new bytes to tag.
///
/// Four independent lanes over 32-byte blocks, so the multiplies of one block overlap (measured:
/// bench/RESULTS.md, "Content hash"); the bytes of an unfinished block wait in `pending`. The tail is mixed in
/// word by word at the end, with the length.
struct ContentHasher: Sendable {
    private var lanes = (
        ContentHash.prime1 &+ ContentHash.prime2, ContentHash.prime2, 0 as UInt64, 0 &- ContentHash.prime1
    )
    /// The bytes after the last whole block, fewer than 32.
    private var pending: [UInt8] = []
    /// Every byte fed so far.
    private var count = 0

    private static let blockSize = 32

    /// Adds `bytes` after those fed before.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        count += bytes.count
        var offset = 0
        if !pending.isEmpty {
            offset = min(Self.blockSize - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<offset])
            guard pending.count == Self.blockSize else { return }
            pending.withUnsafeBytes { mixBlock($0, at: 0) }
            pending.removeAll(keepingCapacity: true)
        }
        while offset + Self.blockSize <= bytes.count {
            mixBlock(bytes, at: offset)
            offset += Self.blockSize
        }
        pending.append(contentsOf: bytes[offset...])
    }

    /// Adds `bytes` after those fed before.
    mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Adds `bytes`, segment by segment, after those fed before.
    mutating func update(_ bytes: ByteSegments) {
        for segment in bytes.segments { segment.withUnsafeBytes { update($0) } }
    }

    /// The hash of every byte fed so far; the hasher can go on taking more.
    func finalize() -> UInt64 {
        var value = Self.rotate(lanes.0, 1) &+ Self.rotate(lanes.1, 7) &+ Self.rotate(lanes.2, 12)
            &+ Self.rotate(lanes.3, 18)
        value ^= UInt64(count) &* ContentHash.prime3
        var offset = 0
        while offset < pending.count {
            // The last word is zero-padded; the length mixed in above tells "ab" from "ab\0".
            let wordCount = min(8, pending.count - offset)
            var tail: UInt64 = 0
            for index in 0..<wordCount { tail |= UInt64(pending[offset + index]) << (8 * UInt64(index)) }
            value = Self.round(value, tail)
            offset += wordCount
        }
        return Self.finalMix(value)
    }

    private mutating func mixBlock(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        lanes.0 = Self.round(lanes.0, Self.word(bytes, offset))
        lanes.1 = Self.round(lanes.1, Self.word(bytes, offset + 8))
        lanes.2 = Self.round(lanes.2, Self.word(bytes, offset + 16))
        lanes.3 = Self.round(lanes.3, Self.word(bytes, offset + 24))
    }

    private static func word(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    private static func round(_ lane: UInt64, _ input: UInt64) -> UInt64 {
        rotate(lane &+ input &* ContentHash.prime2, 31) &* ContentHash.prime1
    }

    private static func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }

    /// Spreads every input bit over every output bit (xor-shift-multiply avalanche).
    private static func finalMix(_ value: UInt64) -> UInt64 {
        var mixed = value
        mixed ^= mixed >> 33
        mixed = mixed &* ContentHash.prime2
        mixed ^= mixed >> 29
        mixed = mixed &* ContentHash.prime3
        mixed ^= mixed >> 32
        return mixed
    }
}
