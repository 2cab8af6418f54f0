import HTTPCore
import JSON

/// Where a chatt was posted from, as `chatter post --lat --lon --facing --speed` gives it.
public struct Location: Equatable, Sendable {
    /// Degrees north, -90...90.
    public var latitude: Double
    /// Degrees east, -180...180.
    public var longitude: Double
    /// Free text, e.g. "North".
    public var facing: String
    /// Free text, e.g. "walking".
    public var speed: String

    /// What `facing` and `speed` say when the command line does not give them.
    public static let unknown = "unknown"

    /// A location with the given fields; not range-checked (see the parsing initializer).
    public init(latitude: Double, longitude: Double, facing: String = unknown, speed: String = unknown) {
        self.latitude = latitude
        self.longitude = longitude
        self.facing = facing
        self.speed = speed
    }

    /// Parses command-line text for both coordinates; the error names the option at fault.
    public init(latitude: String, longitude: String, facing: String?, speed: String?) throws(ClientError) {
        self.init(
            latitude: try Self.degrees(latitude, option: "--lat", limit: 90),
            longitude: try Self.degrees(longitude, option: "--lon", limit: 180),
            facing: facing ?? Self.unknown, speed: speed ?? Self.unknown)
    }

    /// The `geodata` string as the iOS app builds it: a JSON array `[lat,lon,"facing","speed"]` in text form.
    public var geodataText: String {
        var bytes = Array("[\(latitude),\(longitude),".utf8)
        JSONString.append(facing, to: &bytes)
        bytes.append(UInt8(ascii: ","))
        JSONString.append(speed, to: &bytes)
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func degrees(_ text: String, option: String, limit: Double) throws(ClientError) -> Double {
        // Decimal notation only: Double(_:) would also take "nan", "inf" and hexadecimal.
        let decimal = !text.isEmpty && text.unicodeScalars.allSatisfy { "0123456789.-+eE".unicodeScalars.contains($0) }
        guard decimal, let value = Double(text), value.isFinite else {
            throw .usage("\(option) needs a number of degrees, not \(text)")
        }
        guard (-limit...limit).contains(value) else {
            throw .usage("\(option) must be within -\(Int(limit))...\(Int(limit)), not \(text)")
        }
        return value
    }
}
