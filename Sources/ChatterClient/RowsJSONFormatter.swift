/// Re-emits the server's rows as JSON: the same array, one row per line, safe to print on a terminal.
public enum RowsJSONFormatter {
    /// `[`, then each row as a compact JSON array on its own line, then `]` and a newline.
    public static func render(_ rows: [[String?]]) -> String {
        guard !rows.isEmpty else { return "[]\n" }
        var out = Array("[\n".utf8)
        for (index, row) in rows.enumerated() {
            out.append(contentsOf: "  ".utf8)
            append(row, to: &out)
            out.append(contentsOf: (index == rows.count - 1 ? "\n" : ",\n").utf8)
        }
        out.append(contentsOf: "]\n".utf8)
        return String(decoding: out, as: UTF8.self)
    }

    /// One row as a compact JSON array and a newline: how `chatter watch` prints each chatt.
    public static func line(_ row: [String?]) -> String {
        var out: [UInt8] = []
        append(row, to: &out)
        out.append(UInt8(ascii: "\n"))
        return String(decoding: out, as: UTF8.self)
    }

    /// `{"removed":"<id>"}` and a newline: a removal among the rows `line` prints.
    public static func removalLine(_ id: String) -> String {
        var out = Array(#"{"removed":"#.utf8)
        TerminalJSONString.append(id, to: &out)
        out.append(contentsOf: Array("}\n".utf8))
        return String(decoding: out, as: UTF8.self)
    }

    private static func append(_ row: [String?], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (column, element) in row.enumerated() {
            if column > 0 { out.append(UInt8(ascii: ",")) }
            if let element {
                TerminalJSONString.append(element, to: &out)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        }
        out.append(UInt8(ascii: "]"))
    }
}
