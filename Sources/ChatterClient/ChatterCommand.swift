/// What the `chatter` command line asked for.
public enum ChatterCommand: Equatable, Sendable {
    case post(PostCommand, ConnectionOptions)
    case get(GetCommand, ConnectionOptions)
    case help
    case version
}

/// `chatter post`: one chatt, with or without a location.
public struct PostCommand: Equatable, Sendable {
    public var name: String
    public var message: String
    /// nil posts `"geodata": null`.
    public var location: Location?

    /// A post of `message` by `name`.
    public init(name: String, message: String, location: Location? = nil) {
        self.name = name
        self.message = message
        self.location = location
    }
}

/// `chatter get`: which list to fetch and how to print it.
public struct GetCommand: Equatable, Sendable {
    /// How rows are printed.
    public enum Format: String, CaseIterable, Sendable {
        case table, json, geojson
    }

    /// `--maps`: fetch `/getmaps` (rows with geodata) rather than `/getchatts`.
    public var maps: Bool
    public var format: Format

    /// A get with the given options.
    public init(maps: Bool = false, format: Format = .table) {
        self.maps = maps
        self.format = format
    }

    /// The endpoint to fetch; GeoJSON needs locations, so it always reads `getmaps`.
    public var endpoint: String {
        maps || format == .geojson ? "getmaps" : "getchatts"
    }
}

/// Where and how to reach the server.
public struct ConnectionOptions: Equatable, Sendable {
    /// The default `--server`: what `scripts/run` serves.
    public static let defaultServer = "https://localhost:8443"
    /// The default `--cacert` when that file exists: the certificate `scripts/run` serves.
    public static let defaultCAFile = "./chatterd.crt"
    /// The default `--timeout`, in seconds.
    public static let defaultTimeoutSeconds = 10.0

    public var server: ServerURL
    /// PEM file of trusted certificates; nil uses the system's trust store.
    public var caFile: String?
    /// Limit for connecting, and for each wait for the server to accept or send bytes.
    public var timeoutSeconds: Double

    /// Options with the given values.
    public init(server: ServerURL, caFile: String?, timeoutSeconds: Double = defaultTimeoutSeconds) {
        self.server = server
        self.caFile = caFile
        self.timeoutSeconds = timeoutSeconds
    }
}
