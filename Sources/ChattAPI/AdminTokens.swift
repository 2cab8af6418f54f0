/// The moderators' bearer tokens, as `--admin-token-file` lists them: one `name:token` a line, the name saying
/// who acted (it goes into the store's record of each removal). Blank lines and lines starting with `#` are skipped.
/// A token is RFC 6750's `b64token`, at least 16 characters; a name is 1 to 64 characters of letters, digits and
/// `.`, `_`, `-`, `@`.
public struct AdminTokens: Sendable {
    private struct Entry: Sendable {
        let name: String
        let token: [UInt8]
    }

    private let entries: [Entry]

    /// Why a token file cannot be used; the line number is 1-based. No token ever appears in one.
    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case malformedLine(Int)
        case badName(Int)
        case badToken(Int)
        case repeatedToken(Int)
        case noTokens

        public var description: String {
            switch self {
            case .malformedLine(let line): "line \(line) is not name:token"
            case .badName(let line): "line \(line): a name is 1 to 64 letters, digits, '.', '_', '-' or '@'"
            case .badToken(let line): "line \(line): a token is at least 16 characters of A-Z a-z 0-9 - . _ ~ + / ="
            case .repeatedToken(let line): "line \(line): the token of an earlier line"
            case .noTokens: "no name:token line"
            }
        }
    }

    public static let minimumTokenLength = 16

    /// Parses a token file's text.
    public init(parsing text: String) throws(ParseError) {
        var entries: [Entry] = []
        // "\r\n" is one Character, a newline as "\n" is.
        for (index, trimmed) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let number = index + 1
            if trimmed.allSatisfy({ $0 == " " || $0 == "\t" }) || trimmed.hasPrefix("#") { continue }
            guard let colon = trimmed.firstIndex(of: ":") else { throw .malformedLine(number) }
            let name = trimmed[..<colon]
            let token = Array(trimmed[trimmed.index(after: colon)...].utf8)
            guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy(Self.isNameByte) else {
                throw .badName(number)
            }
            guard token.count >= Self.minimumTokenLength, Self.isToken(token) else { throw .badToken(number) }
            guard !entries.contains(where: { $0.token == token }) else { throw .repeatedToken(number) }
            entries.append(Entry(name: String(name), token: token))
        }
        guard !entries.isEmpty else { throw .noTokens }
        self.entries = entries
    }

    /// The moderator whose token `presented` is, or nil. Every token is compared whole, whatever matched before, and
    /// no comparison stops at the first differing byte: how long it takes tells nothing of the tokens' contents.
    public func moderator(presenting presented: some Collection<UInt8>) -> String? {
        let presented = Array(presented)
        var found: String?
        for entry in entries {
            var difference = UInt8(entry.token.count == presented.count ? 0 : 1)
            for index in entry.token.indices {
                difference |= entry.token[index] ^ (index < presented.count ? presented[index] : 0)
            }
            if difference == 0 { found = entry.name }
        }
        return found
    }

    /// The token of an `Authorization` header value of the Bearer scheme (RFC 6750 §2.1: the scheme in any case,
    /// spaces, a `b64token`); nil for any other value.
    public static func bearerToken(_ value: String) -> ArraySlice<UInt8>? {
        let bytes = Array(value.utf8)
        let scheme = Array("bearer".utf8)
        guard bytes.count > scheme.count + 1,
            zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 }), bytes[scheme.count] == UInt8(ascii: " ")
        else { return nil }
        let token = bytes[scheme.count...].drop { $0 == UInt8(ascii: " ") }
        guard !token.isEmpty, isToken(token) else { return nil }
        return token
    }

    /// RFC 6750's b64token: `A-Z a-z 0-9 - . _ ~ + /`, then any number of `=`.
    private static func isToken(_ bytes: some Collection<UInt8>) -> Bool {
        guard bytes.count >= 1 else { return false }
        let body = bytes.reversed().drop { $0 == UInt8(ascii: "=") }
        guard !body.isEmpty else { return false }
        return body.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"),
                UInt8(ascii: "/"):
                true
            default: false
            }
        }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"),
            UInt8(ascii: "@"):
            true
        default: false
        }
    }
}
