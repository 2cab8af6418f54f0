import Viewport

/// What the `chatter` command line asked for.
public enum ChatterCommand: Equatable, Sendable {
    /// Send one chatt.
    case post(PostCommand, ConnectionOptions)
    /// Fetch and print the chatts.
    case get(GetCommand, ConnectionOptions)
    /// Print each new chatt as it is posted, until interrupted (`Watcher`).
    case watch(GetCommand, ConnectionOptions)
    /// Remove one chatt, as a moderator.
    case delete(DeleteCommand, ConnectionOptions)
    /// Print the usage text.
    case help
    /// Print the version.
    case version
}

/// `chatter post`: one chatt, with or without a location.
public struct PostCommand: Equatable, Sendable {
    /// The poster's name; the server checks its length.
    public var name: String
    /// The message; may be empty.
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

/// `chatter delete`: which chatt, why, and the moderator's bearer token.
public struct DeleteCommand: Equatable, Sendable {
    public var id: String
    public var reason: String
    public var token: String

    public init(id: String, reason: String, token: String) {
        self.id = id
        self.reason = reason
        self.token = token
    }
}

/// `chatter get` and `chatter watch`: which list to fetch or follow, and how to print it.
public struct GetCommand: Equatable, Sendable {
    /// How rows are printed.
    public enum Format: String, CaseIterable, Sendable {
        /// Aligned columns (`TableFormatter`), JSON rows (`RowsJSONFormatter`), GeoJSON (`GeoJSONFormatter`).
        case table, json, geojson
    }

    /// `--maps`: fetch `/getmaps` (rows with geodata) rather than `/getchatts`.
    public var maps: Bool
    /// `--format`.
    public var format: Format
    /// `--bbox` (get only): only the chatts located in this box, from `/getmaps`.
    public var box: BoundingBox?
    /// `--newest` (get only): only the newest this many.
    public var newest: Int?

    /// A get with the given options.
    public init(maps: Bool = false, format: Format = .table, box: BoundingBox? = nil, newest: Int? = nil) {
        self.maps = maps
        self.format = format
        self.box = box
        self.newest = newest
    }

    /// The endpoint to fetch (its live feed: `/stream` after it); GeoJSON and a box need locations, so they always
    /// read `getmaps`.
    public var endpoint: String {
        maps || format == .geojson || box != nil ? "getmaps" : "getchatts"
    }

    /// The query string of a get (`?bbox=...&newest=...`), or "" for the whole feed.
    public var query: String {
        var parameters: [String] = []
        if let box { parameters.append(Self.parameter(box)) }
        if let newest { parameters.append("newest=\(newest)") }
        return parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&")
    }

    /// The query string of a watch's stream (`?bbox=...`), or "" for every chatt.
    public var streamQuery: String {
        box.map { "?" + Self.parameter($0) } ?? ""
    }

    private static func parameter(_ box: BoundingBox) -> String {
        "bbox=\(box.west),\(box.south),\(box.east),\(box.north)"
    }
}

/// Where and how to reach the server.
public struct ConnectionOptions: Equatable, Sendable {
    /// The default `--server`: what `scripts/run` serves.
    public static let defaultServer = "https://localhost:8443"
    /// The certificate `scripts/run` serves; trusted without `--cacert` for its own server only (`TrustAnchor`).
    public static let localCertificateFile = "./chatterd.crt"
    /// The default `--timeout`, in seconds.
    public static let defaultTimeoutSeconds = 10.0

    /// `--server`.
    public var server: ServerURL
    /// `--cacert`: PEM file of the only certificates trusted, for any host.
    public var caFile: String?
    /// `./chatterd.crt` when it exists and there is no `--cacert`.
    public var localCertificate: String?
    /// Limit for connecting, and for each wait for the server to accept or send bytes.
    public var timeoutSeconds: Double

    /// Options with the given values.
    public init(
        server: ServerURL, caFile: String?, localCertificate: String? = nil,
        timeoutSeconds: Double = defaultTimeoutSeconds
    ) {
        self.server = server
        self.caFile = caFile
        self.localCertificate = localCertificate
        self.timeoutSeconds = timeoutSeconds
    }
}
