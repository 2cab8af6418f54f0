// libFuzzer target: the strict JSON parser, `/postmaps` and `/postchatt` body validation, geodata parsing and
// the row encoder, checked against invariants with `precondition` (a failed one is a crash libFuzzer keeps).
// The SwiftPM product FuzzChattBody; build and run it with fuzz/run.sh chatt-body SECONDS.
import ChattFeed
import ChattModel
import HTTPCore
import JSON

@_cdecl("LLVMFuzzerTestOneInput")
public func chattBodyFuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let parsed = Result { () throws(JSONParseError) in try JSONParser.parse(bytes) }
    checkParse(bytes, parsed)
    let maps = Result { () throws(APIError) in try ChattValidator.validate(bytes, acceptingGeodata: true) }
    let chatt = Result { () throws(APIError) in try ChattValidator.validate(bytes, acceptingGeodata: false) }
    checkValidation(maps, bytes: bytes, parsed: parsed, acceptingGeodata: true)
    checkValidation(chatt, bytes: bytes, parsed: parsed, acceptingGeodata: false)
    if case .success(let accepted) = maps {
        // /postchatt is /postmaps minus geodata: it accepts whatever /postmaps accepts, with the same fields.
        guard case .success(let plain) = chatt else { preconditionFailure("postmaps accepted what postchatt refused") }
        precondition(same(plain.name, accepted.name) && same(plain.message, accepted.message) && plain.geodata == nil)
    }
    if let text = String(validating: bytes, as: UTF8.self), let geodata = try? Geodata(parsing: text) {
        checkRanges(geodata)
    }
    return 0
}

/// Parser invariants: encoding errors are exactly the standard library's; accepted values are well-formed and
/// survive a write-and-reparse round trip.
private func checkParse(_ bytes: [UInt8], _ parsed: Result<JSONValue, JSONParseError>) {
    let validUTF8 = String(validating: bytes, as: UTF8.self) != nil
    switch parsed {
    case .failure(.invalidUTF8):
        precondition(!validUTF8, "valid UTF-8 reported as invalid")
    case .failure:
        precondition(validUTF8, "invalid UTF-8 not reported as such")
    case .success(let value):
        precondition(validUTF8, "invalid UTF-8 accepted")
        checkWellFormed(value, depth: 0)
        let written = write(value)
        guard let reparsed = try? JSONParser.parse(written) else { preconditionFailure("rewritten value rejected") }
        precondition(reparsed == value, "round trip changed the value")
    }
}

private func checkWellFormed(_ value: JSONValue, depth: Int) {
    switch value {
    case .array(let items):
        precondition(depth < JSONParser.maxDepth, "nesting beyond the limit accepted")
        for item in items { checkWellFormed(item, depth: depth + 1) }
    case .object(let members):
        precondition(depth < JSONParser.maxDepth, "nesting beyond the limit accepted")
        let keys = Set(members.map { Array($0.key.utf8) })
        precondition(keys.count == members.count, "duplicate key accepted")
        for member in members { checkWellFormed(member.value, depth: depth + 1) }
    case .number(let number):
        precondition(number.value.isFinite, "non-finite number accepted")
        let significand = number.literal.prefix { $0 != "e" && $0 != "E" }
        precondition(number.value != 0 || !significand.contains(where: \.isNonzeroDigit), "underflow accepted")
        precondition(Double(number.literal) == number.value, "number value differs from its literal")
    case .null, .bool, .string:
        break
    }
}

/// Validation invariants: only 400 or 422, following docs/API.md's order for the early rules; an accepted chatt
/// is within every limit, holds no NUL, carries exactly the posted strings, and encodes to rows that parse back.
private func checkValidation(
    _ result: Result<NewChatt, APIError>, bytes: [UInt8], parsed: Result<JSONValue, JSONParseError>,
    acceptingGeodata: Bool
) {
    switch result {
    case .failure(let error):
        checkRejection(error, bytes: bytes, parsed: parsed)
    case .success(let chatt):
        guard case .success(let object) = parsed, case .object = object else {
            preconditionFailure("accepted a body that is not a JSON object")
        }
        checkAcceptance(chatt, object: object, acceptingGeodata: acceptingGeodata)
        checkRows(of: chatt)
    }
}

private func checkRejection(_ error: APIError, bytes: [UInt8], parsed: Result<JSONValue, JSONParseError>) {
    precondition([400, 422].contains(error.status.code) && !error.reason.isEmpty, "unexpected error shape")
    let expected: Int? =
        switch parsed {
        case _ where bytes.contains(0): 400
        case .failure(.invalidUTF8), .failure(.loneSurrogate): 400
        case .failure: 422
        case .success(.object): nil  // later rules: 400 or 422, as checked above
        case .success: 422
        }
    if let expected { precondition(error.status.code == expected, "wrong status for an early rule") }
}

private func checkAcceptance(_ chatt: NewChatt, object: JSONValue, acceptingGeodata: Bool) {
    precondition((1...32).contains(chatt.name.unicodeScalars.count), "name length")
    precondition(chatt.message.unicodeScalars.count <= 255, "message length")
    precondition(!(chatt.name + chatt.message + (chatt.geodata ?? "")).utf8.contains(0), "NUL accepted")
    precondition(!object.containsNUL, "body with a NUL accepted")
    let postedName = object["name"] ?? object["username"]
    precondition(postedName == .string(chatt.name), "name differs from the posted one")
    precondition(object["message"] == .string(chatt.message), "message differs from the posted one")
    guard acceptingGeodata else {
        precondition(chatt.geodata == nil, "postchatt kept geodata")
        return
    }
    guard let geodata = chatt.geodata else {
        precondition(object["geodata"] == nil || object["geodata"] == .null, "posted geodata dropped")
        return
    }
    precondition(object["geodata"] == .string(geodata), "geodata differs from the posted one")
    precondition(geodata.unicodeScalars.count <= 255, "geodata length")
    guard let parsedGeodata = try? Geodata(parsing: geodata) else { preconditionFailure("geodata re-validation") }
    checkRanges(parsedGeodata)
}

private func checkRanges(_ geodata: Geodata) {
    precondition(geodata.latitude.isFinite && -90 <= geodata.latitude && geodata.latitude <= 90, "latitude")
    precondition(geodata.longitude.isFinite && -180 <= geodata.longitude && geodata.longitude <= 180, "longitude")
}

private func checkRows(of chatt: NewChatt) {
    let stored = StoredChatt(
        name: chatt.name, message: chatt.message, id: "00000000-0000-4000-8000-000000000000",
        timestamp: "2026-03-25T08:11:59.123456Z", geodata: chatt.geodata)
    let strings: [JSONValue] = [
        .string(stored.name), .string(stored.message), .string(stored.id), .string(stored.timestamp),
    ]
    let mapsRows = try? JSONParser.parse(ChattRowEncoder.mapsRows([stored, stored]))
    let mapsRow = JSONValue.array(strings + [stored.geodata.map(JSONValue.string) ?? .null])
    precondition(mapsRows == .array([mapsRow, mapsRow]), "/getmaps rows do not parse back")
    let chattsRows = try? JSONParser.parse(ChattRowEncoder.chattsRows([stored]))
    precondition(chattsRows == .array([.array(strings)]), "/getchatts rows do not parse back")
}

private func same(_ a: String, _ b: String) -> Bool {
    a.utf8.elementsEqual(b.utf8)
}

/// Writes `value` as compact JSON, keeping number literals as parsed.
private func write(_ value: JSONValue) -> [UInt8] {
    var out: [UInt8] = []
    write(value, to: &out)
    return out
}

private func write(_ value: JSONValue, to out: inout [UInt8]) {
    switch value {
    case .null: out += "null".utf8
    case .bool(let flag): out += (flag ? "true" : "false").utf8
    case .number(let number): out += number.literal.utf8
    case .string(let string): JSONString.append(string, to: &out)
    case .array(let items):
        out.append(UInt8(ascii: "["))
        for (index, item) in items.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            write(item, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    case .object(let members):
        out.append(UInt8(ascii: "{"))
        for (index, member) in members.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONString.append(member.key, to: &out)
            out.append(UInt8(ascii: ":"))
            write(member.value, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}

extension Character {
    /// `1` to `9`: a digit that makes a number's significand nonzero.
    fileprivate var isNonzeroDigit: Bool { ("1"..."9").contains(self) }
}
