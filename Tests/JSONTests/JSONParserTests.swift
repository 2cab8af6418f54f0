import JSON
import Testing

/// One parser input and what it must parse to.
struct ValidJSONCase: Sendable, CustomTestStringConvertible {
    let note: String
    let input: [UInt8]
    let expected: JSONValue
    var testDescription: String { note }

    init(_ note: String, _ input: String, _ expected: JSONValue) {
        self.note = note
        self.input = Array(input.utf8)
        self.expected = expected
    }

    init(_ note: String, bytes: [UInt8], _ expected: JSONValue) {
        self.note = note
        self.input = bytes
        self.expected = expected
    }
}

/// One parser input and the error it must raise.
struct InvalidJSONCase: Sendable, CustomTestStringConvertible {
    let note: String
    let input: [UInt8]
    let expected: JSONParseError
    var testDescription: String { note }

    init(_ note: String, _ input: String, _ expected: JSONParseError) {
        self.init(note, bytes: Array(input.utf8), expected)
    }

    init(_ note: String, bytes: [UInt8], _ expected: JSONParseError) {
        self.note = note
        self.input = bytes
        self.expected = expected
    }
}

private func number(_ literal: String, _ value: Double) -> JSONValue {
    .number(JSONNumber(literal: literal, value: value))
}

private func nested(_ depth: Int, open: String = "[", close: String = "]", inner: String = "") -> String {
    String(repeating: open, count: depth) + inner + String(repeating: close, count: depth)
}

@Suite struct JSONParserTests {
    static let validCases: [ValidJSONCase] = [
        ValidJSONCase("zero", "0", number("0", 0)),
        ValidJSONCase("negative zero keeps its literal", "-0", number("-0", -0.0)),
        ValidJSONCase("upper-case exponent", "1E5", number("1E5", 100_000)),
        ValidJSONCase("signed exponent", "1e+5", number("1e+5", 100_000)),
        ValidJSONCase("fraction and negative exponent", "-12.5e-1", number("-12.5e-1", -1.25)),
        ValidJSONCase("zero fraction", "0.0", number("0.0", 0)),
        ValidJSONCase(
            "integer beyond Int64 is a finite double", "123456789012345678901234567890",
            number("123456789012345678901234567890", 123456789012345678901234567890.0)),
        ValidJSONCase(
            "largest double", "1.7976931348623157e308", number("1.7976931348623157e308", .greatestFiniteMagnitude)),
        // A Double holds a number as written unless it overflows to infinity or, not being zero, underflows to 0.
        ValidJSONCase("zero with a huge exponent", "0e99999999999", number("0e99999999999", 0)),
        ValidJSONCase("negative zero with fraction and exponent", "-0.000e-99999", number("-0.000e-99999", -0.0)),
        ValidJSONCase(
            "smallest subnormal", "4.9406564584124654e-324", number("4.9406564584124654e-324", .leastNonzeroMagnitude)),
        ValidJSONCase("rounds up to the smallest subnormal", "3e-324", number("3e-324", .leastNonzeroMagnitude)),
        ValidJSONCase(
            "just above half the smallest subnormal", "2.4703282292062328e-324",
            number("2.4703282292062328e-324", .leastNonzeroMagnitude)),
        ValidJSONCase(
            "smallest normal", "2.2250738585072014e-308", number("2.2250738585072014e-308", .leastNormalMagnitude)),
        ValidJSONCase(
            "exponent padded with zeros", "1e+0000000000000000001", number("1e+0000000000000000001", 10)),
        ValidJSONCase(
            "300 zeros after the point, then a digit", "0." + String(repeating: "0", count: 300) + "1",
            number("0." + String(repeating: "0", count: 300) + "1", 1e-301)),
        ValidJSONCase("true", "true", .bool(true)),
        ValidJSONCase("false", "false", .bool(false)),
        ValidJSONCase("null", "null", .null),
        ValidJSONCase("empty string", #""""#, .string("")),
        ValidJSONCase("short escapes", #""\"\\\/\b\f\n\r\t""#, .string("\"\\/\u{08}\u{0C}\n\r\t")),
        ValidJSONCase("unicode escape, both hex cases", #""\u00e9\u00C9""#, .string("éÉ")),
        ValidJSONCase("surrogate pair", #""\uD83D\uDE00""#, .string("😀")),
        ValidJSONCase("highest scalar as pair", #""\uDBFF\uDFFF""#, .string("\u{10FFFF}")),
        ValidJSONCase("escaped NUL is a string (validation refuses it later)", #""a\u0000b""#, .string("a\u{0}b")),
        ValidJSONCase("raw multi-byte UTF-8", "\"é€😀\"", .string("é€😀")),
        ValidJSONCase("raw DEL needs no escape", "\"\u{7F}\"", .string("\u{7F}")),
        ValidJSONCase("empty array", "[]", .array([])),
        ValidJSONCase("empty object", "{}", .object([])),
        ValidJSONCase(
            "mixed array", #"[1,"a",null,true,[]]"#,
            .array([number("1", 1), .string("a"), .null, .bool(true), .array([])])),
        ValidJSONCase(
            "object keeps member order", #"{"b":1,"a":2}"#,
            .object([JSONMember("b", number("1", 1)), JSONMember("a", number("2", 2))])),
        ValidJSONCase(
            "same key in different objects", #"{"a":{"a":1}}"#,
            .object([JSONMember("a", .object([JSONMember("a", number("1", 1))]))])),
        ValidJSONCase(
            "canonically equivalent keys are distinct", "{\"é\":1,\"e\\u0301\":2}",
            .object([JSONMember("é", number("1", 1)), JSONMember("e\u{301}", number("2", 2))])),
        ValidJSONCase("all four whitespace bytes", " \t\r\n[ 1 ,\t2 ]\n\r ", .array([number("1", 1), number("2", 2)])),
        ValidJSONCase("leading byte order mark", bytes: [0xEF, 0xBB, 0xBF] + Array("{}".utf8), .object([])),
        ValidJSONCase("64 nested arrays", nested(64), nested64Arrays()),
        ValidJSONCase("64 nested objects", nested(64, open: #"{"a":"#, close: "}", inner: "1"), nested64Objects()),
    ]

    static let invalidCases: [InvalidJSONCase] = [
        InvalidJSONCase("empty text", "", .syntax),
        InvalidJSONCase("only whitespace", " \n", .syntax),
        InvalidJSONCase("leading zero", "01", .syntax),
        InvalidJSONCase("negative leading zero", "-01", .syntax),
        InvalidJSONCase("fraction without digits", "1.", .syntax),
        InvalidJSONCase("fraction without integer", ".5", .syntax),
        InvalidJSONCase("plus sign", "+1", .syntax),
        InvalidJSONCase("lone minus", "-", .syntax),
        InvalidJSONCase("exponent without digits", "1e", .syntax),
        InvalidJSONCase("signed exponent without digits", "1e+", .syntax),
        InvalidJSONCase("hex number", "0x10", .syntax),
        InvalidJSONCase("hex float", "0x1p3", .syntax),
        InvalidJSONCase("NaN", "NaN", .syntax),
        InvalidJSONCase("Infinity", "Infinity", .syntax),
        InvalidJSONCase("negative Infinity", "-Infinity", .syntax),
        InvalidJSONCase("two values", "1 2", .syntax),
        InvalidJSONCase("trailing garbage", "[1] x", .syntax),
        InvalidJSONCase("trailing comma in array", "[1,]", .syntax),
        InvalidJSONCase("leading comma in array", "[,1]", .syntax),
        InvalidJSONCase("trailing comma in object", #"{"a":1,}"#, .syntax),
        InvalidJSONCase("unquoted key", "{a:1}", .syntax),
        InvalidJSONCase("single-quoted key", "{'a':1}", .syntax),
        InvalidJSONCase("missing colon", #"{"a" 1}"#, .syntax),
        InvalidJSONCase("missing value", #"{"a":}"#, .syntax),
        InvalidJSONCase("non-string key", "{1:1}", .syntax),
        InvalidJSONCase("unclosed array", "[1", .syntax),
        InvalidJSONCase("unclosed object", #"{"a":1"#, .syntax),
        InvalidJSONCase("unclosed string", #""abc"#, .syntax),
        InvalidJSONCase("unknown escape", #""\x41""#, .syntax),
        InvalidJSONCase("short unicode escape", #""\u12""#, .syntax),
        InvalidJSONCase("non-hex unicode escape", #""\u12G4""#, .syntax),
        InvalidJSONCase("backslash at end", #""\"#, .syntax),
        InvalidJSONCase("raw tab in string", "\"a\tb\"", .syntax),
        InvalidJSONCase("raw newline in string", "\"a\nb\"", .syntax),
        InvalidJSONCase("raw NUL in string", bytes: [0x22, 0x00, 0x22], .syntax),
        InvalidJSONCase("truncated literal", "tru", .syntax),
        InvalidJSONCase("literal with suffix", "truex", .syntax),
        InvalidJSONCase("upper-case literal", "True", .syntax),
        InvalidJSONCase("line comment", "// c\n1", .syntax),
        InvalidJSONCase("block comment", "/* c */ 1", .syntax),
        InvalidJSONCase("form feed is not whitespace", "\u{0C}1", .syntax),
        InvalidJSONCase("no-break space is not whitespace", "\u{A0}1", .syntax),
        InvalidJSONCase("byte order mark twice", bytes: [0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF, 0x31], .syntax),
        InvalidJSONCase("byte order mark after whitespace", bytes: [0x20, 0xEF, 0xBB, 0xBF, 0x31], .syntax),
        InvalidJSONCase("number overflowing to infinity", "1e400", .numberOutOfRange),
        InvalidJSONCase("negative overflow", "[-1e400]", .numberOutOfRange),
        InvalidJSONCase("400-digit integer", String(repeating: "9", count: 400), .numberOutOfRange),
        InvalidJSONCase("exponent beyond 32 bits", "1e4294967297", .numberOutOfRange),
        InvalidJSONCase("underflow to zero", "1e-400", .numberOutOfRange),
        InvalidJSONCase("negative underflow", "[-1e-400]", .numberOutOfRange),
        InvalidJSONCase("underflow with an eleven-digit exponent", "1e-99999999999", .numberOutOfRange),
        InvalidJSONCase("exponent padded with zeros, underflowing", "1e-0000000000000000000400", .numberOutOfRange),
        InvalidJSONCase("below half the smallest subnormal", "2e-324", .numberOutOfRange),
        InvalidJSONCase(
            "just below half the smallest subnormal", "2.4703282292062327e-324", .numberOutOfRange),
        InvalidJSONCase(
            "400 zeros after the point, then a digit", "0." + String(repeating: "0", count: 400) + "1",
            .numberOutOfRange),
        InvalidJSONCase("nonzero digit only in the fraction", "0.0001e-400", .numberOutOfRange),
        InvalidJSONCase("duplicate key", #"{"a":1,"a":2}"#, .duplicateKey("a")),
        InvalidJSONCase("duplicate key spelled with an escape", #"{"a":1,"\u0061":2}"#, .duplicateKey("a")),
        InvalidJSONCase("duplicate key with equal values", #"[{"x":null,"x":null}]"#, .duplicateKey("x")),
        InvalidJSONCase("duplicate empty key", #"{"":1,"":2}"#, .duplicateKey("")),
        InvalidJSONCase("65 nested arrays", nested(65), .tooDeep),
        InvalidJSONCase("65 nested objects", nested(65, open: #"{"a":"#, close: "}", inner: "1"), .tooDeep),
        InvalidJSONCase("100000 open brackets", String(repeating: "[", count: 100_000), .tooDeep),
        InvalidJSONCase("lone high surrogate", #""\uD800""#, .loneSurrogate),
        InvalidJSONCase("lone low surrogate", #""\uDC00""#, .loneSurrogate),
        InvalidJSONCase("high surrogate then plain escape", #""\uD800\u0041""#, .loneSurrogate),
        InvalidJSONCase("high surrogate then text", #""\uD800x""#, .loneSurrogate),
        InvalidJSONCase("high surrogate then other escape", #""\uD800\n""#, .loneSurrogate),
        InvalidJSONCase("two high surrogates", #""\uDBFF\uDBFF""#, .loneSurrogate),
        InvalidJSONCase("pair in the wrong order", #""\uDC00\uD800""#, .loneSurrogate),
        InvalidJSONCase("truncated two-byte sequence", bytes: [0x22, 0xC3, 0x22], .invalidUTF8),
        InvalidJSONCase("bad continuation byte", bytes: [0x22, 0xC3, 0x28, 0x22], .invalidUTF8),
        InvalidJSONCase("lone continuation byte", bytes: [0x22, 0x80, 0x22], .invalidUTF8),
        InvalidJSONCase("overlong slash", bytes: [0x22, 0xC0, 0xAF, 0x22], .invalidUTF8),
        InvalidJSONCase("overlong three-byte form", bytes: [0x22, 0xE0, 0x80, 0xAF, 0x22], .invalidUTF8),
        InvalidJSONCase("encoded surrogate (CESU-8)", bytes: [0x22, 0xED, 0xA0, 0x80, 0x22], .invalidUTF8),
        InvalidJSONCase("above U+10FFFF", bytes: [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], .invalidUTF8),
        InvalidJSONCase("F5 lead byte", bytes: [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], .invalidUTF8),
        InvalidJSONCase("FF byte", bytes: [0x22, 0xFF, 0x22], .invalidUTF8),
        InvalidJSONCase("truncated at end of input", bytes: [0x22, 0x22, 0xE2, 0x82], .invalidUTF8),
        InvalidJSONCase("invalid UTF-8 outside strings beats syntax", bytes: Array("[1]".utf8) + [0xFF], .invalidUTF8),
        InvalidJSONCase(
            "invalid UTF-8 beats an earlier syntax error", bytes: Array("[1,,".utf8) + [0xC0], .invalidUTF8),
    ]

    @Test("parses valid JSON", arguments: validCases)
    func parsesValid(_ testCase: ValidJSONCase) throws {
        let value = try JSONParser.parse(testCase.input)
        #expect(value == testCase.expected)
    }

    @Test("rejects invalid JSON with the right error", arguments: invalidCases)
    func rejectsInvalid(_ testCase: InvalidJSONCase) {
        #expect(throws: testCase.expected) { try JSONParser.parse(testCase.input) }
    }

    @Test func negativeZeroKeepsItsSign() throws {
        guard case .number(let zero) = try JSONParser.parse("-0") else {
            Issue.record("not a number")
            return
        }
        #expect(zero.value.sign == .minus)
        #expect(zero.literal == "-0")
    }

    @Test func lookupComparesKeysByScalars() throws {
        let value = try JSONParser.parse("{\"e\\u0301\":1}")
        #expect(value["é"] == nil)
        #expect(value["e\u{301}"] == number("1", 1))
        #expect(JSONValue.array([])["e"] == nil)
    }

    @Test func findsNULAtAnyDepthInKeysAndValues() throws {
        #expect(try JSONParser.parse(#"[{"a":[1,"x\u0000"]}]"#).containsNUL)
        #expect(try JSONParser.parse(#"{"b":{"\u0000":1}}"#).containsNUL)
        #expect(try !JSONParser.parse(#"{"b":{"0":"\\u0000"}}"#).containsNUL)
    }
}

private func nested64Arrays() -> JSONValue {
    var value = JSONValue.array([])
    for _ in 1..<64 { value = .array([value]) }
    return value
}

private func nested64Objects() -> JSONValue {
    var value = JSONValue.number(JSONNumber(literal: "1", value: 1))
    for _ in 0..<64 { value = .object([JSONMember("a", value)]) }
    return value
}
