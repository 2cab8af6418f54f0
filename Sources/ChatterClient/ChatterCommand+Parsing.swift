extension ChatterCommand {
    /// Parses `arguments` (without the program name).
    ///
    /// - Parameters:
    ///   - environment: supplies `CHATTER_SERVER` and `CHATTER_CACERT` when the options are absent.
    ///   - fileExists: decides whether `./chatterd.crt` is there to be trusted for its own server.
    public static func parse(
        _ arguments: [String], environment: [String: String], fileExists: (String) -> Bool
    ) throws(ClientError) -> ChatterCommand {
        let scan = try ArgumentScanner(arguments)
        if scan.has("--help") || scan.command == "help" { return .help }
        if scan.has("--version") || scan.command == "version" { return .version }
        switch scan.command {
        case "post":
            try scan.requireOnly(["--name", "--message", "--lat", "--lon", "--facing", "--speed"], for: "post")
            return .post(try PostCommand(scan), try ConnectionOptions(scan, environment, fileExists))
        case "get":
            try scan.requireOnly(["--maps", "--format"], for: "get")
            return .get(try GetCommand(scan), try ConnectionOptions(scan, environment, fileExists))
        case "watch":
            try scan.requireOnly(["--maps", "--format"], for: "watch")
            return .watch(try GetCommand(scan), try ConnectionOptions(scan, environment, fileExists))
        case nil:
            throw .usage("missing command: post, get or watch (see chatter --help)")
        case let other?:
            throw .usage("unknown command \(other): use post, get or watch (see chatter --help)")
        }
    }
}

extension PostCommand {
    /// The post options of a scanned command line.
    init(_ scan: ArgumentScanner) throws(ClientError) {
        guard let name = scan.values["--name"] else { throw .usage("post needs --name") }
        guard let message = scan.values["--message"] else { throw .usage("post needs --message") }
        let values = scan.values
        var location: Location?
        switch (values["--lat"], values["--lon"]) {
        case (let latitude?, let longitude?):
            location = try Location(
                latitude: latitude, longitude: longitude, facing: values["--facing"], speed: values["--speed"])
        case (nil, nil):
            if values["--facing"] != nil || values["--speed"] != nil {
                throw .usage("--facing and --speed need a location: give --lat and --lon too")
            }
        default:
            throw .usage("--lat and --lon go together: give both or neither")
        }
        self.init(name: name, message: message, location: location)
    }
}

extension GetCommand {
    /// The get (or watch) options of a scanned command line.
    init(_ scan: ArgumentScanner) throws(ClientError) {
        let text = scan.values["--format"] ?? Format.table.rawValue
        guard let format = Format(rawValue: text) else {
            throw .usage("--format must be table, json or geojson, not \(text)")
        }
        self.init(maps: scan.has("--maps"), format: format)
    }
}

extension ConnectionOptions {
    /// Server, CA file and timeout: from the flags, else the environment, else the defaults.
    init(_ scan: ArgumentScanner, _ environment: [String: String], _ fileExists: (String) -> Bool) throws(ClientError) {
        // An empty variable counts as unset, as shells make it easy to export one by mistake.
        func setting(_ flag: String, _ variable: String) -> String? {
            scan.values[flag] ?? environment[variable].flatMap { $0.isEmpty ? nil : $0 }
        }
        let server = try ServerURL(parsing: setting("--server", "CHATTER_SERVER") ?? Self.defaultServer)
        let caFile = setting("--cacert", "CHATTER_CACERT")
        let local = caFile == nil && fileExists(Self.localCertificateFile) ? Self.localCertificateFile : nil
        var timeout = Self.defaultTimeoutSeconds
        if let text = scan.values["--timeout"] {
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 86_400 else {
                throw .usage("--timeout needs a number of seconds above 0, not \(text)")
            }
            timeout = seconds
        }
        self.init(server: server, caFile: caFile, localCertificate: local, timeoutSeconds: timeout)
    }
}
