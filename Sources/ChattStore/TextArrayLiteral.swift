/// PostgreSQL's text form of a `text[]` value, for sending a whole column of rows as one parameter.
enum TextArrayLiteral {
    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    /// The literal for `values`: nil is NULL; every other value is double-quoted with `"` and `\` escaped, so any
    /// text (the word NULL, braces, commas, surrounding spaces, the empty string) reads back exactly.
    static func encode(_ values: [String?]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(2 + values.reduce(0) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            guard let value else {
                bytes.append(contentsOf: "NULL".utf8)
                continue
            }
            bytes.append(quote)
            // UTF-8 continuation and lead bytes are >= 0x80, so only the two ASCII specials need escaping.
            for byte in value.utf8 {
                if byte == quote || byte == backslash { bytes.append(backslash) }
                bytes.append(byte)
            }
            bytes.append(quote)
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
