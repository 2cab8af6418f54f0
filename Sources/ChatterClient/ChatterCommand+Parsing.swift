import ChattModel
import Viewport

extension ChatterCommand {
    /// Parses `arguments` (without the program name).
    ///
    /// - Parameters:
    ///   - environment: supplies `CHATTER_SERVER`, `CHATTER_CACERT` and `CHATTER_ADMIN_TOKEN` when the options are
    ///     absent.
    ///   - fileExists: decides whether `./chatterd.crt` is there to be trusted for its own server.
    ///   - readFile: the text of a file (`--admin-token-file`), or nil when it cannot be read.
    public static func parse(
        _ arguments: [String], environment: [String: String], fileExists: (String) -> Bool,
        readFile: (String) -> String? = { _ in nil }
    ) throws(ClientError) -> ChatterCommand {
        let scan = try ArgumentScanner(arguments)
        if scan.has("--help") || scan.command == "help" { return .help }
        if scan.has("--version") || scan.command == "version" { return .version }
        switch scan.command {
        case "post":
            try scan.requireOnly(["--name", "--message", "--lat", "--lon", "--facing", "--speed"], for: "post")
            return .post(try PostCommand(scan), try ConnectionOptions(scan, environment, fileExists))
        case "get":
            try scan.requireOnly(["--maps", "--format", "--bbox", "--newest"], for: "get")
            return .get(try GetCommand(scan), try ConnectionOptions(scan, environment, fileExists))
        case "watch":
            try scan.requireOnly(["--maps", "--format", "--bbox"], for: "watch")
            return .watch(try GetCommand(scan), try ConnectionOptions(scan, environment, fileExists))
        case "delete":
            try scan.requireOnly(["--reason", "--admin-token-file"], for: "delete", operands: 1)
            return .delete(
                try DeleteCommand(scan, environment, readFile), try ConnectionOptions(scan, environment, fileExists))
        case nil:
            throw .usage("missing command: post, get, watch or delete (see chatter --help)")
        case let other?:
            throw .usage("unknown command \(other): use post, get, watch or delete (see chatter --help)")
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

extension DeleteCommand {
    /// The delete of a scanned command line: its id operand, `--reason`, and the token of the first `name:token`
    /// line of `--admin-token-file`, else `CHATTER_ADMIN_TOKEN`.
    init(_ scan: ArgumentScanner, _ environment: [String: String], _ readFile: (String) -> String?)
        throws(ClientError)
    {
        guard let id = scan.operands.first else { throw .usage("delete needs the id of the chatt to remove") }
        guard ChattID(Substring(id)) != nil else { throw .usage("\(id) is not a chatt id (a UUID)") }
        guard let reason = scan.values["--reason"], !reason.isEmpty else { throw .usage("delete needs --reason") }
        let token: String
        if let path = scan.values["--admin-token-file"] {
            guard let text = readFile(path) else { throw .usage("cannot read --admin-token-file \(path)") }
            let lines = text.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("#") && $0.contains(":") }
            guard let line = lines.first, let colon = line.firstIndex(of: ":"),
                colon < line.index(before: line.endIndex)
            else { throw .usage("--admin-token-file \(path) has no name:token line") }
            token = String(line[line.index(after: colon)...])
        } else if let value = environment["CHATTER_ADMIN_TOKEN"], !value.isEmpty {
            token = value
        } else {
            throw .usage("delete needs a moderator's token: --admin-token-file FILE or CHATTER_ADMIN_TOKEN")
        }
        self.init(id: id.lowercased(), reason: reason, token: token)
    }
}

extension GetCommand {
    /// The get (or watch) options of a scanned command line.
    init(_ scan: ArgumentScanner) throws(ClientError) {
        let text = scan.values["--format"] ?? Format.table.rawValue
        guard let format = Format(rawValue: text) else {
            throw .usage("--format must be table, json or geojson, not \(text)")
        }
        var box: BoundingBox?
        if let text = scan.values["--bbox"] {
            box = BoundingBox(parsing: Substring(text))
            guard box != nil else {
                throw .usage("--bbox needs W,S,E,N in degrees (-180..180, -90..90, S <= N), not \(text)")
            }
        }
        var newest: Int?
        if let text = scan.values["--newest"] {
            newest = Int(text)
            guard let count = newest, (0...999_999_999).contains(count), text.allSatisfy(\.isASCII) else {
                throw .usage("--newest needs a whole number from 0 to 999999999, not \(text)")
            }
        }
        self.init(maps: scan.has("--maps"), format: format, box: box, newest: newest)
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
