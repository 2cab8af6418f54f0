import ChattModel
import Testing

/// A body posted to one endpoint and the outcome docs/API.md requires.
struct ValidationCase: Sendable, CustomTestStringConvertible {
    enum Endpoint: Sendable { case postmaps, postchatt }
    enum Outcome: Sendable {
        case accepted(name: String, message: String, geodata: String?)
        case rejected(Int)
    }

    let note: String
    let endpoint: Endpoint
    let body: [UInt8]
    let outcome: Outcome
    var testDescription: String { "\(endpoint): \(note)" }

    init(_ note: String, _ body: String, _ outcome: Outcome) {
        self.init(note, .postmaps, bytes: Array(body.utf8), outcome)
    }

    init(_ note: String, _ endpoint: Endpoint, _ body: String, _ outcome: Outcome) {
        self.init(note, endpoint, bytes: Array(body.utf8), outcome)
    }

    init(_ note: String, bytes: [UInt8], _ outcome: Outcome) {
        self.init(note, .postmaps, bytes: bytes, outcome)
    }

    init(_ note: String, _ endpoint: Endpoint, bytes: [UInt8], _ outcome: Outcome) {
        self.note = note
        self.endpoint = endpoint
        self.body = bytes
        self.outcome = outcome
    }
}

private func ok(_ name: String, _ message: String, _ geodata: String? = nil) -> ValidationCase.Outcome {
    .accepted(name: name, message: message, geodata: geodata)
}

/// A postmaps body with the given fields, each already written as JSON text.
private func body(name: String = #""a""#, message: String = #""m""#, geodata: String? = nil) -> String {
    "{\"name\":\(name),\"message\":\(message)" + (geodata.map { ",\"geodata\":\($0)" } ?? "") + "}"
}

/// A postmaps body whose geodata string holds exactly `content` (escaped here as a JSON string).
private func geo(_ content: String) -> String {
    var escaped = ""
    for scalar in content.unicodeScalars {
        escaped += scalar == "\"" || scalar == "\\" ? "\\" + String(scalar) : String(scalar)
    }
    return body(geodata: "\"" + escaped + "\"")
}

private let family = "👨‍👩‍👧‍👦"  // one Character, seven scalars
private let iOSGeodata = #"[42.2936,-83.7166,"North","walking"]"#

/// A geodata string of exactly `scalars` Unicode scalars that is otherwise valid.
private func paddedGeodata(_ scalars: Int) -> String {
    let frame = #"[1,2,"","w"]"#
    return #"[1,2,""# + String(repeating: "x", count: scalars - frame.unicodeScalars.count) + #"","w"]"#
}

@Suite struct ChattValidatorTests {
    static let iOSCases: [ValidationCase] = [
        ValidationCase(
            "iOS postmaps payload",
            #"{"name":"alice","message":"hi","geodata":"[42.2936,-83.7166,\"North\",\"walking\"]"}"#,
            ok("alice", "hi", iOSGeodata)),
        ValidationCase("older clients send username", #"{"username":"bob","message":"hey"}"#, ok("bob", "hey")),
        ValidationCase(
            "older clients send username", .postchatt, #"{"username":"bob","message":"hey"}"#, ok("bob", "hey")),
        ValidationCase("null geodata", #"{"name":"bob","message":"x","geodata":null}"#, ok("bob", "x")),
        ValidationCase("null geodata", .postchatt, #"{"name":"bob","message":"x","geodata":null}"#, ok("bob", "x")),
        ValidationCase("name wins over username", #"{"username":"old","name":"new","message":""}"#, ok("new", "")),
        ValidationCase(
            "unknown keys ignored", #"{"x":[1,{"y":false}],"name":"a","message":"m","z":null}"#, ok("a", "m")),
        ValidationCase("byte order mark", bytes: [0xEF, 0xBB, 0xBF] + Array(body().utf8), ok("a", "m")),
        ValidationCase("postchatt ignores geodata string", .postchatt, geo(iOSGeodata), ok("a", "m")),
        ValidationCase("postchatt ignores geodata of any type", .postchatt, body(geodata: "5"), ok("a", "m")),
        ValidationCase("postchatt ignores invalid geodata content", .postchatt, geo("[91,0]"), ok("a", "m")),
        ValidationCase(
            "geodata stored exactly as posted", geo(#"[ 42.29360 , -83.7166e0 ,"N\u00f6rth","w" ]"#),
            ok("a", "m", #"[ 42.29360 , -83.7166e0 ,"N\u00f6rth","w" ]"#)),
        ValidationCase(
            "escapes decoded in name and message", #"{"name":"\u00e9\"","message":"a\nb\/"}"#, ok("é\"", "a\nb/")),
    ]

    static let lengthCases: [ValidationCase] = [
        ValidationCase("name of 1 scalar", body(name: #""x""#), ok("x", "m")),
        ValidationCase("empty name", body(name: #""""#), .rejected(400)),
        ValidationCase("empty username", #"{"username":"","message":"m"}"#, .rejected(400)),
        ValidationCase(
            "name of 32 ASCII", body(name: "\"\(String(repeating: "n", count: 32))\""),
            ok(String(repeating: "n", count: 32), "m")),
        ValidationCase("name of 33 ASCII", body(name: "\"\(String(repeating: "n", count: 33))\""), .rejected(400)),
        ValidationCase(
            "name of 4 families + 4 = 32 scalars", body(name: "\"\(String(repeating: family, count: 4))abcd\""),
            ok(String(repeating: family, count: 4) + "abcd", "m")),
        ValidationCase(
            "name of 4 families + 5 = 33 scalars in 9 Characters",
            body(name: "\"\(String(repeating: family, count: 4))abcde\""), .rejected(400)),
        ValidationCase(
            "name of 16 e+U+0301 = 32 scalars", body(name: "\"\(String(repeating: "e\u{301}", count: 16))\""),
            ok(String(repeating: "e\u{301}", count: 16), "m")),
        ValidationCase(
            "name of 16 e+U+0301 and x = 33 scalars", body(name: "\"\(String(repeating: "e\\u0301", count: 16))x\""),
            .rejected(400)),
        ValidationCase(
            "name of 32 two-byte scalars", body(name: "\"\(String(repeating: "é", count: 32))\""),
            ok(String(repeating: "é", count: 32), "m")),
        ValidationCase("empty message", body(message: #""""#), ok("a", "")),
        ValidationCase(
            "message of 255 scalars", body(message: "\"\(String(repeating: "😀", count: 255))\""),
            ok("a", String(repeating: "😀", count: 255))),
        ValidationCase(
            "message of 256 scalars", body(message: "\"\(String(repeating: "m", count: 256))\""), .rejected(400)),
        ValidationCase("geodata of 255 scalars", geo(paddedGeodata(255)), ok("a", "m", paddedGeodata(255))),
        ValidationCase("geodata of 256 scalars", geo(paddedGeodata(256)), .rejected(400)),
        ValidationCase(
            "geodata of 256 scalars, bad content", body(geodata: "\"\(String(repeating: "g", count: 256))\""),
            .rejected(400)),
    ]

    static let bodyErrorCases: [ValidationCase] = [
        // 422: not valid JSON.
        ValidationCase("empty body", "", .rejected(422)),
        ValidationCase("unterminated object", #"{"name":"a","message":"m""#, .rejected(422)),
        ValidationCase("trailing garbage", body() + " x", .rejected(422)),
        ValidationCase("second value", body() + body(), .rejected(422)),
        ValidationCase("NaN literal in ignored key", #"{"name":"a","message":"m","n":NaN}"#, .rejected(422)),
        ValidationCase("number out of range in ignored key", #"{"name":"a","message":"m","n":1e400}"#, .rejected(422)),
        ValidationCase("underflowing number in ignored key", #"{"name":"a","message":"m","n":1e-400}"#, .rejected(422)),
        ValidationCase(
            "underflowing number in ignored key", .postchatt, #"{"name":"a","message":"m","n":[2e-324]}"#,
            .rejected(422)),
        ValidationCase(
            "nested too deeply",
            #"{"name":"a","message":"m","n":"# + String(repeating: "[", count: 64)
                + String(repeating: "]", count: 64) + "}", .rejected(422)),
        ValidationCase("comment", "/**/" + body(), .rejected(422)),
        // 422: not an object.
        ValidationCase("array", #"[{"name":"a","message":"m"}]"#, .rejected(422)),
        ValidationCase("string", #""name""#, .rejected(422)),
        ValidationCase("null", "null", .rejected(422)),
        ValidationCase("number", "42", .rejected(422)),
        // 422: duplicate key.
        ValidationCase("duplicate name", #"{"name":"a","name":"b","message":"m"}"#, .rejected(422)),
        ValidationCase("duplicate ignored key", #"{"x":1,"x":1,"name":"a","message":"m"}"#, .rejected(422)),
        ValidationCase(
            "duplicate key spelled with an escape", #"{"name":"a","n\u0061me":"b","message":"m"}"#, .rejected(422)),
        ValidationCase(
            "duplicate key in a nested object", #"{"x":{"k":1,"k":2},"name":"a","message":"m"}"#, .rejected(422)),
        // 422: name or message missing or not a string.
        ValidationCase("name and username missing", #"{"message":"m"}"#, .rejected(422)),
        ValidationCase("name a number", body(name: "1"), .rejected(422)),
        ValidationCase("name null", body(name: "null"), .rejected(422)),
        ValidationCase("name an array", body(name: #"["a"]"#), .rejected(422)),
        ValidationCase(
            "name null does not fall back to username", #"{"name":null,"username":"b","message":"m"}"#, .rejected(422)),
        ValidationCase("username not a string", #"{"username":5,"message":"m"}"#, .rejected(422)),
        ValidationCase("message missing", #"{"name":"a"}"#, .rejected(422)),
        ValidationCase("message missing", .postchatt, #"{"name":"a"}"#, .rejected(422)),
        ValidationCase("message null", body(message: "null"), .rejected(422)),
        ValidationCase("message a number", body(message: "5"), .rejected(422)),
        ValidationCase("message an object", .postchatt, body(message: "{}"), .rejected(422)),
        // 422: geodata neither string nor null.
        ValidationCase("geodata a number", body(geodata: "5"), .rejected(422)),
        ValidationCase("geodata an unquoted array", body(geodata: #"[1,2,"N","w"]"#), .rejected(422)),
        ValidationCase("geodata a boolean", body(geodata: "false"), .rejected(422)),
        // 400: invalid UTF-8.
        ValidationCase(
            "invalid UTF-8 in name",
            bytes: Array(#"{"name":""#.utf8) + [0xC3, 0x28] + Array(#"","message":"m"}"#.utf8),
            .rejected(400)),
        ValidationCase("invalid UTF-8 after the object", bytes: Array(body().utf8) + [0xFF], .rejected(400)),
        ValidationCase(
            "encoded surrogate in message", .postchatt,
            bytes: Array(#"{"name":"a","message":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8), .rejected(400)),
        ValidationCase("lone surrogate escape in name", body(name: #""\uD800""#), .rejected(400)),
        ValidationCase(
            "lone surrogate escape in ignored key", #"{"x":"\uDC00","name":"a","message":"m"}"#, .rejected(400)),
        // 400: NUL anywhere.
        ValidationCase("escaped NUL in name", body(name: #""a\u0000b""#), .rejected(400)),
        ValidationCase("escaped NUL in message", .postchatt, body(message: #""\u0000""#), .rejected(400)),
        ValidationCase(
            "escaped NUL in an ignored key's value", #"{"x":["\u0000"],"name":"a","message":"m"}"#, .rejected(400)),
        ValidationCase("escaped NUL in a key", #"{"x\u0000":1,"name":"a","message":"m"}"#, .rejected(400)),
        ValidationCase("escaped NUL in ignored geodata", .postchatt, body(geodata: #""\u0000""#), .rejected(400)),
        ValidationCase("escaped NUL in geodata", body(geodata: #""[1,2,\"\u0000\",\"w\"]""#), .rejected(400)),
        ValidationCase("NUL escaped inside the geodata string", geo(#"[1,2,"\u0000","w"]"#), .rejected(400)),
        ValidationCase(
            "raw NUL in a string", bytes: Array(#"{"name":"a"#.utf8) + [0] + Array(#"","message":"m"}"#.utf8),
            .rejected(400)),
        ValidationCase("raw NUL outside strings", bytes: Array(body().utf8) + [0], .rejected(400)),
        // Rule order.
        ValidationCase("syntax before NUL", #"{"name":"\u0000""#, .rejected(422)),
        ValidationCase("top-level shape before NUL", #"["\u0000"]"#, .rejected(422)),
        ValidationCase("NUL before field types", #"{"message":5,"x":"\u0000"}"#, .rejected(400)),
        ValidationCase("field types before lengths", body(name: #""""#, message: "5"), .rejected(422)),
        ValidationCase("lengths before geodata content", body(name: #""""#, geodata: #""bad""#), .rejected(400)),
    ]

    static let geodataCases: [ValidationCase] = [
        ValidationCase("north pole and date line", geo(#"[90,-180,"N","w"]"#), ok("a", "m", #"[90,-180,"N","w"]"#)),
        ValidationCase("south pole and date line", geo(#"[-90.0,180.0,"",""]"#), ok("a", "m", #"[-90.0,180.0,"",""]"#)),
        ValidationCase("negative zero and exponent", geo(#"[-0,1E1,"N","w"]"#), ok("a", "m", #"[-0,1E1,"N","w"]"#)),
        ValidationCase("latitude 90.0001", geo(#"[90.0001,0,"N","w"]"#), .rejected(422)),
        ValidationCase("latitude -90.0001", geo(#"[-90.0001,0,"N","w"]"#), .rejected(422)),
        ValidationCase("longitude -180.0001", geo(#"[0,-180.0001,"N","w"]"#), .rejected(422)),
        ValidationCase("longitude 181", geo(#"[0,181,"N","w"]"#), .rejected(422)),
        ValidationCase("latitude 91", geo(#"[91,0,"N","w"]"#), .rejected(422)),
        ValidationCase("NaN literal", geo(#"[NaN,0,"N","w"]"#), .rejected(422)),
        ValidationCase("NaN string", geo(#"["NaN",0,"N","w"]"#), .rejected(422)),
        ValidationCase("nan string", geo(#"[0,"nan","N","w"]"#), .rejected(422)),
        ValidationCase("Infinity literal", geo(#"[Infinity,0,"N","w"]"#), .rejected(422)),
        ValidationCase("inf string", geo(#"["inf",0,"N","w"]"#), .rejected(422)),
        ValidationCase("1e400", geo(#"[1e400,0,"N","w"]"#), .rejected(422)),
        ValidationCase("1e400 string", geo(#"["1e400",0,"N","w"]"#), .rejected(422)),
        ValidationCase("hex float", geo(#"[0x1p3,0,"N","w"]"#), .rejected(422)),
        ValidationCase("hex float string", geo(#"["0x1p3",0,"N","w"]"#), .rejected(422)),
        // Numbers a Double holds as written: zeros however spelled, subnormals, padded exponents, long digit runs.
        ValidationCase(
            "zeros with huge exponents", geo(#"[0e99999999999,-0.0e-99999,"N","w"]"#),
            ok("a", "m", #"[0e99999999999,-0.0e-99999,"N","w"]"#)),
        ValidationCase(
            "subnormals", geo(#"[5e-324,-2.2250738585072009e-308,"N","w"]"#),
            ok("a", "m", #"[5e-324,-2.2250738585072009e-308,"N","w"]"#)),
        ValidationCase(
            "exponents padded with zeros", geo(#"[1e+0000000000000000001,-1E-0000000000000000001,"N","w"]"#),
            ok("a", "m", #"[1e+0000000000000000001,-1E-0000000000000000001,"N","w"]"#)),
        ValidationCase(
            "200 zeros before a digit", geo("[0." + String(repeating: "0", count: 200) + #"1,0,"N","w"]"#),
            ok("a", "m", "[0." + String(repeating: "0", count: 200) + #"1,0,"N","w"]"#)),
        // Numbers no Double holds as written: nonzero but underflowing to 0, or overflowing to infinity.
        ValidationCase("latitude 1e-99999999999", geo(#"[1e-99999999999,0,"N","w"]"#), .rejected(422)),
        ValidationCase("longitude -1e-400", geo(#"[0,-1e-400,"N","w"]"#), .rejected(422)),
        ValidationCase("latitude 2e-324, under half the least subnormal", geo(#"[2e-324,0,"N","w"]"#), .rejected(422)),
        ValidationCase(
            "underflow through a padded exponent", geo(#"[1e-0000000000000000000400,0,"N","w"]"#), .rejected(422)),
        ValidationCase("longitude 1e99999999999", geo(#"[0,1e99999999999,"N","w"]"#), .rejected(422)),
        ValidationCase(
            "underflow in an otherwise wrong shape", geo(#"[1e-400,0,"N"]"#), .rejected(422)),
        ValidationCase("three elements", geo(#"[1,2,"N"]"#), .rejected(422)),
        ValidationCase("five elements", geo(#"[1,2,"N","w","x"]"#), .rejected(422)),
        ValidationCase("object", geo(#"{"lat":1}"#), .rejected(422)),
        ValidationCase("not JSON", geo("here"), .rejected(422)),
        ValidationCase("empty string", geo(""), .rejected(422)),
        ValidationCase("facing a number", geo(#"[1,2,3,"w"]"#), .rejected(422)),
        ValidationCase("speed null", geo(#"[1,2,"N",null]"#), .rejected(422)),
        ValidationCase("trailing garbage", geo(#"[1,2,"N","w"] x"#), .rejected(422)),
        ValidationCase("lone surrogate inside", geo(#"[1,2,"\uD800","w"]"#), .rejected(422)),
        ValidationCase("leading zero", geo(#"[01,2,"N","w"]"#), .rejected(422)),
        ValidationCase("byte order mark inside the string", geo("\u{FEFF}" + #"[1,2,"N","w"]"#), .rejected(422)),
        ValidationCase(
            "byte order mark escaped in the body", body(geodata: #""\uFEFF[1,2,\"N\",\"w\"]""#), .rejected(422)),
    ]

    @Test("iOS payloads and accepted shapes", arguments: iOSCases)
    func iOS(_ testCase: ValidationCase) { check(testCase) }

    @Test("lengths in Unicode scalars", arguments: lengthCases)
    func lengths(_ testCase: ValidationCase) { check(testCase) }

    @Test("docs/API.md body error rows", arguments: bodyErrorCases)
    func bodyErrors(_ testCase: ValidationCase) { check(testCase) }

    @Test("geodata content", arguments: geodataCases)
    func geodata(_ testCase: ValidationCase) { check(testCase) }

    @Test func aNumberNoDoubleHoldsIsNamedInTheError() {
        let outOfRange = APIError.unprocessable("geodata number out of range for a double")
        for text in [#"[1e-99999999999,0,"N","w"]"#, #"[0,-1e-400,"N","w"]"#, #"[1e400,0,"N","w"]"#] {
            #expect(throws: outOfRange, "\(text)") { try Geodata(parsing: text) }
        }
        let body = Array(#"{"name":"a","message":"m","n":1e-400}"#.utf8)
        #expect(throws: APIError.unprocessable("body has a number out of range")) {
            try ChattValidator.validate(body, acceptingGeodata: false)
        }
    }

    @Test func zerosAndSubnormalsKeepTheirValues() throws {
        let zeros = try Geodata(parsing: #"[-0e99999999999,0.000e-99999,"N","w"]"#)
        #expect(zeros.latitude == 0 && zeros.latitude.sign == .minus && zeros.longitude == 0)
        let subnormal = try Geodata(parsing: #"[5e-324,-3e-324,"N","w"]"#)
        #expect(subnormal.latitude == .leastNonzeroMagnitude && subnormal.longitude == -.leastNonzeroMagnitude)
    }

    @Test func geodataParsesToItsFields() throws {
        let geodata = try Geodata(parsing: iOSGeodata)
        #expect(geodata == Geodata(latitude: 42.2936, longitude: -83.7166, facing: "North", speed: "walking"))
    }

    private func check(_ testCase: ValidationCase) {
        let result = Result { () throws(APIError) in
            try ChattValidator.validate(testCase.body, acceptingGeodata: testCase.endpoint == .postmaps)
        }
        switch (testCase.outcome, result) {
        case (.accepted(let name, let message, let geodata), .success(let chatt)):
            // Byte comparison: String == would accept a canonically equivalent but different value.
            #expect(Array(chatt.name.utf8) == Array(name.utf8))
            #expect(Array(chatt.message.utf8) == Array(message.utf8))
            #expect(chatt.geodata.map { Array($0.utf8) } == geodata.map { Array($0.utf8) })
        case (.rejected(let status), .failure(let error)):
            #expect(error.status.code == status)
            #expect(!error.reason.isEmpty)
        case (_, .success(let chatt)):
            Issue.record("accepted as \(chatt), expected \(testCase.outcome)")
        case (_, .failure(let error)):
            Issue.record("rejected with \(error.status.code) \(error.reason), expected \(testCase.outcome)")
        }
    }
}
