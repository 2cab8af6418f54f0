import ChattModel
import JSON

/// Which row of an encoded feed holds each chatt id, found by scanning the body's rows once.
public struct FeedIndex: Sendable {
    private let rows: [ChattID: Int]

    /// Indexes `body`, whose rows start at `rowBounds` (see `ChattRowEncoder.encode`). Every row is
    /// `["name","message","id",...`: the id is the third string, after two strings that may hold escapes.
    init(body: [UInt8], rowBounds: [Int]) {
        var rows: [ChattID: Int] = [:]
        rows.reserveCapacity(rowBounds.count - 1)
        for row in 0..<(rowBounds.count - 1) {
            var index = rowBounds[row] + 1  // "["
            index = Self.endOfString(body, from: index) + 1  // name, then ","
            index = Self.endOfString(body, from: index) + 1  // message, then ","
            // The encoder wrote these rows, so the id is there; a row that somehow is not is left out.
            if let id = ChattID(body, index + 1) { rows[id] = row }
        }
        self.rows = rows
    }

    /// The row of the chatt with `id`, or nil when the feed does not hold it.
    public func row(of id: ChattID) -> Int? {
        rows[id]
    }

    /// The offset just past the JSON string whose opening quote is at `start`: a quote ends the string
    /// unless a backslash escapes it, and an escaped backslash escapes nothing further.
    private static func endOfString(_ body: [UInt8], from start: Int) -> Int {
        var index = start + 1
        while index < body.count {
            switch body[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return index
    }
}
