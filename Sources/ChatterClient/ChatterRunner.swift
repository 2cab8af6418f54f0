import JSON

/// Carries out a parsed command: builds the request, sends it, and formats the answer.
public enum ChatterRunner {
    /// Sends one request and returns the complete response; `HTTPExchange.perform` in real use.
    public typealias Send = (HTTPClientRequest, ConnectionOptions) throws(ClientError) -> HTTPClientResponse

    /// What a successful command prints.
    public struct Output: Equatable, Sendable {
        /// Text for stdout.
        public var text: String
        /// Lines for stderr that do not make the command fail.
        public var warnings: [String]
    }

    /// Runs `command`, using `send` for the one request it makes (if any); not `.watch`, which `Watcher` runs.
    public static func run(_ command: ChatterCommand, send: Send) throws(ClientError) -> Output {
        switch command {
        case .help:
            return Output(text: chatterUsage, warnings: [])
        case .version:
            return Output(text: "chatter \(chatterVersion)\n", warnings: [])
        case .post(let post, let options):
            let body = PostBody.encode(name: post.name, message: post.message, location: post.location)
            let request = HTTPClientRequest(
                method: "POST", target: options.server.path(for: "postmaps"), host: options.server.hostHeader,
                jsonBody: body)
            try ChattResponse.checkPosted(try send(request, options))
            return Output(text: "", warnings: [])
        case .get(let get, let options):
            let request = HTTPClientRequest(
                method: "GET", target: options.server.path(for: get.endpoint) + get.query,
                host: options.server.hostHeader)
            let maps = get.endpoint == "getmaps"
            let width = maps ? ChattResponse.mapsWidth : ChattResponse.chattsWidth
            let rows = try ChattResponse.rows(try send(request, options), width: width)
            return format(rows, as: get.format, maps: maps)
        case .delete(let delete, let options):
            var body = Array(#"{"reason":"#.utf8)
            JSONString.append(delete.reason, to: &body)
            body.append(UInt8(ascii: "}"))
            let request = HTTPClientRequest(
                method: "DELETE", target: options.server.path(for: "chatts/" + delete.id),
                host: options.server.hostHeader, jsonBody: body, bearerToken: delete.token)
            try ChattResponse.checkPosted(try send(request, options))
            return Output(text: "", warnings: [])
        case .watch:
            preconditionFailure("watch prints as chatts arrive and never ends by itself: Watcher runs it")
        }
    }

    private static func format(_ rows: [[String?]], as format: GetCommand.Format, maps: Bool) -> Output {
        switch format {
        case .table:
            return Output(text: TableFormatter.render(rows, maps: maps), warnings: [])
        case .json:
            return Output(text: RowsJSONFormatter.render(rows), warnings: [])
        case .geojson:
            let output = GeoJSONFormatter.render(rows)
            var warnings: [String] = []
            if output.skipped > 0 {
                warnings.append("left out \(output.skipped) chatt(s) whose geodata is not [lat, lon, facing, speed]")
            }
            return Output(text: output.text, warnings: warnings)
        }
    }
}
