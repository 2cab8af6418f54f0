import JSON

/// Turns a `POST /postmaps` or `POST /postchatt` body into a `NewChatt`, applying docs/API.md's rules in a fixed order.
public enum ChattValidator {
    /// Names hold 1...32 Unicode scalars (PostgreSQL counts characters as scalars).
    public static let nameScalars = 1...32
    /// Messages hold at most 255 Unicode scalars.
    public static let maxMessageScalars = 255
    /// A geodata string holds at most 255 Unicode scalars.
    public static let maxGeodataScalars = 255

    /// Validates a request body.
    ///
    /// - Parameter acceptingGeodata: true for `/postmaps`; false for `/postchatt`, which ignores any `geodata` key.
    /// - Throws: the 400 or 422 `APIError` of the first rule broken: raw NUL bytes, encoding, JSON syntax,
    ///   top-level shape, escaped NUL characters, field types, lengths, then the geodata content.
    public static func validate(_ body: [UInt8], acceptingGeodata: Bool) throws(APIError) -> NewChatt {
        // NUL cannot be stored (libpq truncates text at it), so it is refused wherever it appears: as a raw
        // byte (which JSON would call a syntax error) here, as a `\u0000` escape once parsed.
        guard !body.contains(0) else { throw nulCharacter }
        let object = try parseObject(body)
        guard !object.containsNUL else { throw nulCharacter }
        let name = try nameField(of: object)
        guard case .string(let message)? = object["message"] else {
            throw .unprocessable("message must be a string")
        }
        let geodata = acceptingGeodata ? try geodataField(of: object) : nil

        guard nameScalars.contains(name.unicodeScalars.count) else {
            throw .badRequest("name must be 1 to 32 characters")
        }
        guard message.unicodeScalars.count <= maxMessageScalars else {
            throw .badRequest("message must be at most 255 characters")
        }
        if let geodata {
            guard geodata.unicodeScalars.count <= maxGeodataScalars else {
                throw .badRequest("geodata must be at most 255 characters")
            }
            _ = try Geodata(parsing: geodata)
        }
        return NewChatt(name: name, message: message, geodata: geodata)
    }

    static let nulCharacter = APIError.badRequest("NUL character not allowed")

    private static func parseObject(_ body: [UInt8]) throws(APIError) -> JSONValue {
        let value: JSONValue
        do {
            value = try JSONParser.parse(body)
        } catch {
            throw apiError(for: error)
        }
        guard case .object = value else { throw .unprocessable("body must be a JSON object") }
        return value
    }

    /// `name`, or `username` from older clients when `name` is absent.
    private static func nameField(of object: JSONValue) throws(APIError) -> String {
        guard case .string(let name)? = object["name"] ?? object["username"] else {
            throw .unprocessable("name must be a string")
        }
        return name
    }

    /// A string, or nil when `geodata` is absent or null.
    private static func geodataField(of object: JSONValue) throws(APIError) -> String? {
        switch object["geodata"] {
        case nil, .null?: return nil
        case .string(let geodata)?: return geodata
        default: throw .unprocessable("geodata must be a string or null")
        }
    }

    /// Bad encoding is 400 (docs/API.md's "invalid UTF-8" row); every other parse failure is 422.
    static func apiError(for error: JSONParseError) -> APIError {
        switch error {
        case .invalidUTF8: .badRequest("body is not valid UTF-8")
        case .loneSurrogate: .badRequest("string contains a lone surrogate escape")
        case .syntax: .unprocessable("body is not valid JSON")
        case .duplicateKey: .unprocessable("body has a duplicate key")
        case .tooDeep: .unprocessable("body is nested too deeply")
        case .numberOutOfRange: .unprocessable("body has a number out of range")
        }
    }
}
