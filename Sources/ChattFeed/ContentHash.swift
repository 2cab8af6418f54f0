import ChattModel
import JSON

/// A fast 64-bit hash of bytes, for entity tags: the same bytes give the same value in every process, so
/// servers sharing one database give one feed one tag. Not cryptographic; it only has to tell feeds apart.
enum ContentHash {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9

    /// `value` as 16 lower-case hex digits.
    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The hash of `bytes`.
    static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { hash($0) }
    }

    /// Four independent lanes over 32-byte blocks, so the multiplies of one block overlap (measured:
    /// bench/RESULTS.md, "Content hash"), then the tail word by word and a final mix.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var lanes = (prime1 &+ prime2, prime2, 0 as UInt64, 0 &- prime1)
        var offset = 0
        while offset + 32 <= bytes.count {
            lanes.0 = round(lanes.0, word(bytes, offset))
            lanes.1 = round(lanes.1, word(bytes, offset + 8))
            lanes.2 = round(lanes.2, word(bytes, offset + 16))
            lanes.3 = round(lanes.3, word(bytes, offset + 24))
            offset += 32
        }
        var value = rotate(lanes.0, 1) &+ rotate(lanes.1, 7) &+ rotate(lanes.2, 12) &+ rotate(lanes.3, 18)
        value ^= UInt64(bytes.count) &* prime3
        while offset < bytes.count {
            // The last word is zero-padded; the length mixed in above tells "ab" from "ab\0".
            let count = min(8, bytes.count - offset)
            var tail: UInt64 = 0
            for index in 0..<count { tail |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
            value = round(value, tail)
            offset += count
        }
        return finalMix(value)
    }

    private static func word(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    private static func round(_ lane: UInt64, _ input: UInt64) -> UInt64 {
        rotate(lane &+ input &* prime2, 31) &* prime1
    }

    private static func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }

    /// Spreads every input bit over every output bit (xor-shift-multiply avalanche).
    private static func finalMix(_ value: UInt64) -> UInt64 {
        var mixed = value
        mixed ^= mixed >> 33
        mixed = mixed &* prime2
        mixed ^= mixed >> 29
        mixed = mixed &* prime3
        mixed ^= mixed >> 32
        return mixed
    }
}
