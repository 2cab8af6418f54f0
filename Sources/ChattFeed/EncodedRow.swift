/// Reading back one row as `ChattRowEncoder` writes it: `[` and its elements, JSON strings or `null`, between
/// commas, then `]`, with no spaces. A lone chatt of a clusters answer copies its strings from there as they are:
/// the encoder escapes them as `JSONString` does, so they need no parse and no escaping again.
enum EncodedRow {
    /// Where each element of `row` lies (a string with its quotes, or `null`); nil if `row` is not such a row.
    static func elements(of row: ArraySlice<UInt8>) -> [Range<Int>]? {
        var elements: [Range<Int>] = []
        var index = row.startIndex
        guard index < row.endIndex, row[index] == UInt8(ascii: "[") else { return nil }
        index += 1
        while index < row.endIndex {
            let start = index
            if row[index] == UInt8(ascii: "\"") {
                index += 1
                while index < row.endIndex, row[index] != UInt8(ascii: "\"") {
                    // An escape's next byte is never the string's end.
                    index += row[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard index < row.endIndex else { return nil }
                index += 1
            } else if row[index...].starts(with: "null".utf8) {
                index += 4
            } else {
                return nil
            }
            elements.append(start..<index)
            guard index < row.endIndex else { return nil }
            if row[index] == UInt8(ascii: "]") { return index + 1 == row.endIndex ? elements : nil }
            guard row[index] == UInt8(ascii: ",") else { return nil }
            index += 1
        }
        return nil
    }
}
