@testable import ChattFeed

/// The rows of a feed body found from its JSON alone (arrays at depth two): where each ends, and whether
/// `GzipPieces` ends a gzip piece after it. The feed's own bookkeeping is not asked.
func feedRows(_ body: [UInt8]) -> [(end: Int, endsPiece: Bool)] {
    var rows: [(end: Int, endsPiece: Bool)] = []
    var depth = 0
    var inString = false
    var index = 0
    var rowStart = 0
    while index < body.count {
        let byte = body[index]
        if inString {
            if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { inString = false }
        } else if byte == UInt8(ascii: "\"") {
            inString = true
        } else if byte == UInt8(ascii: "[") {
            depth += 1
            if depth == 2 { rowStart = index }
        } else if byte == UInt8(ascii: "]") {
            if depth == 2 {
                let id = FeedIndex.id(in: body[...], rowStart: rowStart)
                rows.append((index + 1, id.map { GzipPieces.endsPiece(after: $0.description) } ?? false))
            }
            depth -= 1
        }
        index += 1
    }
    return rows
}

/// Where the gzip pieces of a feed body end, found from its JSON alone.
func feedPieceEnds(_ body: [UInt8]) -> [Int] {
    feedRows(body).filter(\.endsPiece).map(\.end)
}
