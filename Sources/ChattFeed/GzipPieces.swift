/// Where a feed's gzip form is cut into pieces (`GzipStream`): after each row whose chatt id hashes to a multiple
/// of `averageRows`. The cuts depend on the rows alone, not on their places or on how the feed grew, so every
/// process cuts the same feed the same way, and a removal moves no cut but the removed row's own: the pieces
/// around it keep their bytes.
///
/// A piece of about 1 024 rows is about 170 KB of `/getmaps` JSON, recompressed in a few milliseconds, and costs
/// the gzip form little: each piece starts with an empty window, and deflate's window is only 32 KiB.
enum GzipPieces {
    /// Rows in a piece, on average: a power of two.
    static let averageRows: UInt64 = 1024

    /// Whether a piece ends after the row of the chatt with `id`: FNV-1a over its bytes, whose high bits are
    /// well mixed (Swift's `Hasher` is seeded per process, so it cannot serve).
    static func endsPiece(after id: String) -> Bool {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in id.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return (hash >> 40) & (averageRows - 1) == 0
    }
}
