import JSON

/// The content of a chatt's `geodata` string: a JSON array `[lat, lon, facing, speed]` (docs/API.md `POST /postmaps`).
///
/// Used only to check a posted string; the string itself is what gets stored, byte for byte.
public struct Geodata: Sendable, Equatable {
    /// Degrees within -90...90; finite, and zero only if posted as zero (see `JSONNumber.value`).
    public var latitude: Double
    /// Degrees within -180...180; finite, and zero only if posted as zero (see `JSONNumber.value`).
    public var longitude: Double
    /// Free text from the client, e.g. "North".
    public var facing: String
    /// Free text from the client, e.g. "walking".
    public var speed: String

    /// Geodata with the given fields.
    public init(latitude: Double, longitude: Double, facing: String, speed: String) {
        self.latitude = latitude
        self.longitude = longitude
        self.facing = facing
        self.speed = speed
    }

    /// Parses `text` with the strict JSON parser and checks the shape and ranges.
    ///
    /// - Throws: 400 for a NUL character in a decoded element; 422 for anything else wrong, including a number no
    ///   `Double` holds as written (`1e400`, or `1e-400`, which is not zero but would read as 0).
    public init(parsing text: String) throws(APIError) {
        guard !text.utf8.contains(0) else { throw ChattValidator.nulCharacter }
        // The parser allows a byte order mark before a JSON text, but inside a stored string it is an invisible
        // character that a phone's parser may not expect.
        guard !text.utf8.starts(with: [0xEF, 0xBB, 0xBF]) else { throw Self.wrongShape }
        let value: JSONValue
        do {
            value = try JSONParser.parse(text)
        } catch .numberOutOfRange {
            // Stored byte for byte, `1e-400` would reach every phone as a latitude its parser reads as 0.
            throw Self.numberOutOfRange
        } catch {
            throw Self.wrongShape
        }
        guard !value.containsNUL else { throw ChattValidator.nulCharacter }
        guard case .array(let items) = value, items.count == 4,
            case .number(let latitude) = items[0], case .number(let longitude) = items[1],
            case .string(let facing) = items[2], case .string(let speed) = items[3]
        else { throw Self.wrongShape }
        // ClosedRange.contains is false for NaN, unlike a pair of `<`/`>` rejections.
        guard latitude.value.isFinite, (-90.0...90.0).contains(latitude.value) else {
            throw .unprocessable("geodata latitude out of range")
        }
        guard longitude.value.isFinite, (-180.0...180.0).contains(longitude.value) else {
            throw .unprocessable("geodata longitude out of range")
        }
        self.init(latitude: latitude.value, longitude: longitude.value, facing: facing, speed: speed)
    }

    private static let wrongShape = APIError.unprocessable("geodata must be a JSON array [lat, lon, facing, speed]")
    /// The answer to a number no `Double` holds as written (see `JSONParser.holds(_:significand:)`).
    static let numberOutOfRange = APIError.unprocessable("geodata number out of range for a double")
}
