import ChattModel

/// Prints rows as aligned columns for a terminal, shortening long text.
public enum TableFormatter {
    /// Widest message shown, in characters; longer ones end in "…".
    public static let maxMessageWidth = 48
    /// Widest name shown, in characters.
    public static let maxNameWidth = 20
    /// Widest latitude, longitude, facing or speed shown, in characters.
    public static let maxLocationWidth = 12

    /// A header line and one line per row (`/getchatts` rows, or `/getmaps` rows when `maps`), each ending in "\n".
    public static func render(_ rows: [[String?]], maps: Bool) -> String {
        let (titles, limits) = columns(maps: maps)
        let lines = [titles] + rows.map { cells($0, maps: maps, limits: limits) }
        let widths = titles.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        return lines.map { line($0, widths: widths) }.joined()
    }

    /// The header of a table whose rows come one at a time: every column as wide as its limit.
    public static func streamingHeader(maps: Bool) -> String {
        let (titles, limits) = columns(maps: maps)
        return line(titles, widths: limits)
    }

    /// One row of that table, aligned with `streamingHeader`.
    public static func streamingLine(_ row: [String?], maps: Bool) -> String {
        let limits = columns(maps: maps).limits
        return line(cells(row, maps: maps, limits: limits), widths: limits)
    }

    /// The column titles and the most characters each column shows.
    private static func columns(maps: Bool) -> (titles: [String], limits: [Int]) {
        var titles = ["TIME (UTC)", "NAME", "MESSAGE"]
        var limits = [19, maxNameWidth, maxMessageWidth]
        if maps {
            titles += ["LAT", "LON", "FACING", "SPEED"]
            limits += Array(repeating: maxLocationWidth, count: 4)
        }
        return (titles, limits)
    }

    /// The cells of one row, each cut to its limit.
    private static func cells(_ row: [String?], maps: Bool, limits: [Int]) -> [String] {
        let fields = [time(field(row, 3)), field(row, 0), field(row, 1)] + (maps ? location(field(row, 4)) : [])
        return zip(fields, limits).map { cell($0, limit: $1) }
    }

    /// The fields padded to `widths` with two spaces between them; the last is not padded, so no line ends in
    /// spaces.
    private static func line(_ fields: [String], widths: [Int]) -> String {
        let padded = fields.dropLast().enumerated().map { column, text in
            text + String(repeating: " ", count: widths[column] - text.count + 2)
        }
        return padded.joined() + (fields.last ?? "") + "\n"
    }

    /// The row's element at `index`, or nil if the row is shorter.
    private static func field(_ row: [String?], _ index: Int) -> String? {
        index < row.count ? row[index] : nil
    }

    /// `2026-03-25T08:11:59.123456Z` → `2026-03-25 08:11:59`; anything else as sent.
    private static func time(_ timestamp: String?) -> String? {
        guard let timestamp else { return nil }
        let characters = Array(timestamp.prefix(20))
        guard characters.count >= 19, characters[10] == "T" else { return timestamp }
        return String(characters[..<10]) + " " + String(characters[11..<19])
    }

    /// LAT, LON, FACING, SPEED cells from a geodata string; dashes when there is none.
    private static func location(_ geodata: String?) -> [String?] {
        guard let geodata else { return [nil, nil, nil, nil] }
        guard let parsed = try? Geodata(parsing: geodata) else { return ["(invalid)", nil, nil, nil] }
        return ["\(parsed.latitude)", "\(parsed.longitude)", parsed.facing, parsed.speed]
    }

    /// One cell: "-" for null, escaped as `TerminalText` does, cut to `limit` characters ending in "…".
    private static func cell(_ text: String?, limit: Int) -> String {
        guard let text else { return "-" }
        let pieces = TerminalText.escapedCharacters(text)
        let clean = pieces.joined()
        guard clean.count > limit else { return clean }
        // Cut between pieces, so an escape is shown whole or not at all (half of one would read as text).
        var shown = ""
        var width = 0
        for piece in pieces {
            guard width + piece.count < limit else { break }
            shown += piece
            width += piece.count
        }
        return shown + "…"
    }
}
