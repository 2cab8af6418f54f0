import ASCII

/// A libpq connection string made safe to log: every secret replaced by `***`.
enum ConninfoRedaction {
    static let mask = "***"

    /// The keywords whose values are secrets: those libpq itself hides (`dispchar` "*" in `PQconndefaults`), that
    /// is `password`, `sslpassword` (the passphrase of the client's key) and, from libpq 18, `oauth_client_secret`.
    /// Compared ignoring case: libpq refuses `PASSWORD`, but a refused secret is still a secret.
    static let secretKeywords: Set<String> = ["password", "sslpassword", "oauth_client_secret"]

    /// `conninfo` with every secret masked: a URI's `user:password@` and secret query parameters (their names
    /// percent-decoded, as libpq reads them), or the value of a secret keyword. A string that cannot be read with
    /// confidence is masked whole.
    static func redacted(_ conninfo: String) -> String {
        if conninfo.isEmpty { return "(libpq defaults)" }
        if conninfo.hasPrefix("postgresql://") || conninfo.hasPrefix("postgres://") {
            return redactedURI(conninfo) ?? maskedURI(conninfo)
        }
        return redactedKeywords(conninfo) ?? mask
    }

    private static func isSecret(_ keyword: some StringProtocol) -> Bool {
        secretKeywords.contains(keyword.lowercased())
    }

    /// The scheme alone, then the mask.
    private static func maskedURI(_ uri: String) -> String {
        String(uri[..<(uri.range(of: "://")?.upperBound ?? uri.startIndex)]) + mask
    }

    /// `uri` with its password and secret parameters masked; nil when it cannot be read with confidence.
    private static func redactedURI(_ uri: String) -> String? {
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
        if tail.prefix(while: { $0 != "?" }).contains("@") { return nil }
        if let question = tail.firstIndex(of: "?") {
            let query = tail[tail.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false)
            var masked: [String] = []
            for parameter in query {
                guard let equals = parameter.firstIndex(of: "=") else {
                    masked.append(String(parameter))
                    continue
                }
                // libpq percent-decodes the name too, so `pass%77ord` is `password`.
                guard let name = ASCII.percentDecoded(parameter[..<equals]) else { return nil }
                masked.append(isSecret(name) ? "\(parameter[..<equals])=\(mask)" : String(parameter))
            }
            tail = String(tail[...question]) + masked.joined(separator: "&")
        }
        return String(uri[..<schemeEnd]) + authority + tail
    }

    /// `key = value` pairs (values bare or single-quoted, with `\` escapes in either), re-joined with secrets
    /// masked; nil when the text does not follow that grammar. Read byte by byte, as libpq reads it: its syntax is
    /// ASCII, and its white space is C's `isspace`, so no Unicode space or combining mark can end a value early.
    private static func redactedKeywords(_ text: String) -> String? {
        var bytes = ArraySlice(text.utf8)
        var pairs: [String] = []
        while true {
            bytes = bytes.drop(while: isSpace)
            guard !bytes.isEmpty else { break }
            let key = bytes.prefix { $0 != UInt8(ascii: "=") && !isSpace($0) }
            bytes = bytes.dropFirst(key.count).drop(while: isSpace)
            guard !key.isEmpty, bytes.first == UInt8(ascii: "=") else { return nil }
            bytes = bytes.dropFirst().drop(while: isSpace)
            guard let value = takeValue(&bytes) else { return nil }
            let name = String(decoding: key, as: UTF8.self)
            pairs.append(name + "=" + (isSecret(name) ? mask : String(decoding: value, as: UTF8.self)))
        }
        return pairs.joined(separator: " ")
    }

    /// Removes one value from the front of `bytes` and returns it as written (quotes and escapes included): a bare
    /// value ends at unescaped white space, a quoted one at its unescaped closing quote; nil for an unclosed quote.
    private static func takeValue(_ bytes: inout ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let quoted = bytes.first == UInt8(ascii: "'")
        var index = quoted ? bytes.startIndex + 1 : bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\\") {
                index += 1  // the escaped byte, if any, is part of the value whatever it is
            } else if quoted ? byte == UInt8(ascii: "'") : isSpace(byte) {
                return take(&bytes, upTo: quoted ? index + 1 : index)
            }
            index += 1
        }
        return quoted ? nil : take(&bytes, upTo: bytes.endIndex)
    }

    /// The bytes before `end`, removed from `bytes`.
    private static func take(_ bytes: inout ArraySlice<UInt8>, upTo end: Int) -> ArraySlice<UInt8> {
        let end = min(end, bytes.endIndex)
        defer { bytes = bytes[end...] }
        return bytes[..<end]
    }

    /// C's `isspace` in the C locale, which libpq's parser uses.
    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || (0x09...0x0D).contains(byte)
    }
}
