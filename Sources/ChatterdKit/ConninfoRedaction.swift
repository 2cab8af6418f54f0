/// A libpq connection string made safe to log: passwords replaced by `***`.
enum ConninfoRedaction {
    static let mask = "***"

    /// `conninfo` with every password masked: a URI's `user:password@` and `password=` query parameter, or the
    /// value of a `password` keyword. A string that cannot be read with confidence is masked whole.
    static func redacted(_ conninfo: String) -> String {
        if conninfo.isEmpty { return "(libpq defaults)" }
        if conninfo.hasPrefix("postgresql://") || conninfo.hasPrefix("postgres://") { return redactedURI(conninfo) }
        return redactedKeywords(conninfo) ?? mask
    }

    private static func redactedURI(_ uri: String) -> String {
        let schemeEnd = uri.range(of: "://")?.upperBound ?? uri.startIndex
        let rest = uri[schemeEnd...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var authority = String(rest[..<authorityEnd])
        // The password is between the first ':' of the userinfo and its last '@'.
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            authority.replaceSubrange(authority.index(after: colon)..<at, with: mask)
        }
        var tail = String(rest[authorityEnd...])
        // An '@' past the authority means a password with a raw '/' or '?': no telling where it ends.
        if tail.prefix(while: { $0 != "?" }).contains("@") { return String(uri[..<schemeEnd]) + mask }
        if let question = tail.firstIndex(of: "?") {
            let query = tail[tail.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false)
            let masked = query.map { parameter in
                parameter.lowercased().hasPrefix("password=") ? "password=\(mask)" : String(parameter)
            }
            tail = String(tail[...question]) + masked.joined(separator: "&")
        }
        return String(uri[..<schemeEnd]) + authority + tail
    }

    /// `key = value` pairs (values bare or single-quoted with `\` escapes), re-joined with passwords masked;
    /// nil when the text does not follow that grammar.
    private static func redactedKeywords(_ text: String) -> String? {
        var characters = Substring(text)
        var pairs: [String] = []
        while true {
            characters = characters.drop { $0.isWhitespace }
            guard !characters.isEmpty else { break }
            let key = characters.prefix { $0 != "=" && !$0.isWhitespace }
            characters = characters.dropFirst(key.count).drop { $0.isWhitespace }
            guard !key.isEmpty, characters.first == "=" else { return nil }
            characters = characters.dropFirst().drop { $0.isWhitespace }
            guard let value = takeValue(&characters) else { return nil }
            pairs.append(key.lowercased() == "password" ? "\(key)=\(mask)" : "\(key)=\(value)")
        }
        return pairs.joined(separator: " ")
    }

    /// Removes one value from the front of `characters` and returns it as written (quotes included).
    private static func takeValue(_ characters: inout Substring) -> String? {
        guard characters.first == "'" else {
            let value = characters.prefix { !$0.isWhitespace }
            characters = characters.dropFirst(value.count)
            return String(value)
        }
        var index = characters.index(after: characters.startIndex)
        while index < characters.endIndex {
            switch characters[index] {
            case "\\":
                index = characters.index(after: index)
                guard index < characters.endIndex else { return nil }
            case "'":
                let end = characters.index(after: index)
                defer { characters = characters[end...] }
                return String(characters[..<end])
            default: break
            }
            index = characters.index(after: index)
        }
        return nil
    }
}
