/// A JSON value as RFC 8259 defines it, keeping object member order and number literals.
public enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    /// Members in document order; the parser guarantees the keys are unique.
    case object([JSONMember])

    /// The value of the member called `key` when this is an object.
    ///
    /// Keys are compared by Unicode scalars, as RFC 8259 §8.3 asks, not by Swift's canonical equivalence.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key.unicodeScalars.elementsEqual(key.unicodeScalars) }?.value
    }

    /// Whether any string in this value, key or value at any depth, contains U+0000.
    public var containsNUL: Bool {
        // An explicit work list rather than recursion, so a hand-built deep value cannot exhaust the stack.
        var pending: [JSONValue] = [self]
        while let value = pending.popLast() {
            switch value {
            case .string(let string):
                if string.utf8.contains(0) { return true }
            case .array(let items):
                pending.append(contentsOf: items)
            case .object(let members):
                for member in members {
                    if member.key.utf8.contains(0) { return true }
                    pending.append(member.value)
                }
            case .null, .bool, .number:
                break
            }
        }
        return false
    }
}

extension JSONValue: Equatable {
    /// Structural equality; strings compare by Unicode scalars (`"é"` differs from `"e\u{301}"`).
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a == b
        default: return false
        }
    }
}

/// One `"key": value` member of a JSON object.
public struct JSONMember: Sendable, Equatable {
    public var key: String
    public var value: JSONValue

    /// A member called `key` holding `value`.
    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }

    /// Equal when the keys have the same Unicode scalars and the values are equal.
    public static func == (lhs: JSONMember, rhs: JSONMember) -> Bool {
        lhs.key.unicodeScalars.elementsEqual(rhs.key.unicodeScalars) && lhs.value == rhs.value
    }
}

/// A JSON number: its literal text exactly as written, and its value as a finite `Double`.
public struct JSONNumber: Sendable, Equatable {
    /// The number as it appeared in the document, e.g. `-0` or `1E5`.
    public var literal: String
    /// The nearest `Double`; never infinite or NaN, and zero only when the literal is (`-0`, `0.0e9`).
    public var value: Double

    /// A number with the given literal text and value.
    public init(literal: String, value: Double) {
        self.literal = literal
        self.value = value
    }
}

/// Why a byte sequence is not an acceptable JSON text.
public enum JSONParseError: Error, Sendable, Equatable {
    /// The bytes are not well-formed UTF-8 (RFC 8259 §8.1, RFC 3629).
    case invalidUTF8
    /// A `\uXXXX` escape names a surrogate that is not half of a valid pair, so no Unicode string can hold it.
    case loneSurrogate
    /// The text does not follow the RFC 8259 grammar (including trailing bytes and an empty text).
    case syntax
    /// An object has two members with the same key (RFC 8259 §4 says SHOULD be unique; we insist).
    case duplicateKey(String)
    /// Arrays and objects nest deeper than `JSONParser.maxDepth`.
    case tooDeep
    /// No `Double` holds the number as written: its magnitude is too large (`1e400` would be infinity), or it is
    /// not zero yet too small (`1e-400` would be 0).
    case numberOutOfRange
}
