/// Runs `chatter watch`: carries out what a `WatchMachine` decides, printing each chatt as it arrives.
public struct Watcher<Random: RandomNumberGenerator> {
    /// Opens the live feed for a request; `StreamingExchange` in real use.
    public typealias Open = (HTTPClientRequest, ConnectionOptions) throws(ClientError) -> any StreamingResponse
    /// The outside world: requests, the clock, and the two output streams (written at once, unbuffered).
    public struct Effects {
        public var open: Open
        public var send: ChatterRunner.Send
        public var sleep: (Double) -> Void
        public var output: (String) -> Void
        public var notice: (String) -> Void

        /// Effects made of the given closures.
        public init(
            open: @escaping Open, send: @escaping ChatterRunner.Send, sleep: @escaping (Double) -> Void,
            output: @escaping (String) -> Void, notice: @escaping (String) -> Void
        ) {
            self.open = open
            self.send = send
            self.sleep = sleep
            self.output = output
            self.notice = notice
        }
    }

    private let command: GetCommand
    private let options: ConnectionOptions
    private let effects: Effects
    private var machine: WatchMachine<Random>
    private var headerShown = false

    /// A watch of `command`'s feed on `options.server`, with its jitter drawn from `generator`.
    public init(_ command: GetCommand, options: ConnectionOptions, generator: Random, effects: Effects) {
        self.command = command
        self.options = options
        self.effects = effects
        let width = command.endpoint == "getmaps" ? ChattResponse.mapsWidth : ChattResponse.chattsWidth
        machine = WatchMachine(width: width, generator: generator)
    }

    /// Watches until a failure that is not worth another try, which it throws.
    public mutating func run() throws(ClientError) -> Never {
        var action = machine.start()
        while true {
            switch action {
            case .subscribe(let lastEventID, let wait, let notice):
                pause(wait, notice)
                action = subscribe(after: lastEventID)
            case .fetchPosition(let wait, let notice):
                pause(wait, notice)
                action = fetchPosition()
            case .fail(let error):
                throw error
            case .read, .show, .showRemoval:
                preconditionFailure("read and show answer a stream's items, which subscribe handles")
            }
        }
    }

    private func pause(_ seconds: Double, _ notice: String?) {
        if let notice { effects.notice(notice) }
        if seconds > 0 { effects.sleep(seconds) }
    }

    /// Opens the stream and shows its chatts until it ends; returns what to do then.
    private mutating func subscribe(after lastEventID: String?) -> WatchAction {
        let request = HTTPClientRequest(
            method: "GET", target: options.server.path(for: command.endpoint + "/stream") + command.streamQuery,
            host: options.server.hostHeader, accept: "text/event-stream", lastEventID: lastEventID)
        let stream: any StreamingResponse
        let action: WatchAction
        do {
            stream = try effects.open(request, options)
            action = machine.streamAnswered(try stream.head())
        } catch {
            return machine.requestFailed(error)
        }
        guard action == .read else { return action }
        if command.format == .table && !headerShown {
            effects.output(TableFormatter.streamingHeader(maps: command.endpoint == "getmaps"))
            headerShown = true
        }
        return read(stream, from: lastEventID)
    }

    /// Reads the stream's events, showing each chatt, until it ends or the machine wants something else.
    private mutating func read(_ stream: any StreamingResponse, from lastEventID: String?) -> WatchAction {
        var parser = ServerSentEventParser(lastEventID: lastEventID ?? "")
        while true {
            let bytes: [UInt8]?
            do {
                bytes = try stream.nextBody()
            } catch {
                return machine.streamEnded(error)
            }
            guard let bytes else { return machine.streamEnded(nil) }
            let items: [ServerSentEventParser.Item]
            do {
                items = try parser.receive(bytes)
            } catch {
                return .fail(error)
            }
            for item in items {
                switch machine.received(item) {
                case .read: continue
                case .show(let row): show(row)
                case .showRemoval(let id): showRemoval(id)
                case let other: return other
                }
            }
        }
    }

    /// Fetches the feed for its `Feed-Position` only; none of its rows are shown.
    private mutating func fetchPosition() -> WatchAction {
        let request = HTTPClientRequest(
            method: "GET", target: options.server.path(for: command.endpoint) + "?limit=0",
            host: options.server.hostHeader)
        do {
            return machine.feedAnswered(try effects.send(request, options))
        } catch {
            return machine.requestFailed(error)
        }
    }

    /// A removal, in the shape of the format: a notice line among the table's rows, `{"removed": id}` among the
    /// JSON rows, and a Feature with no geometry and `"removed": true` among the GeoJSON ones (RFC 7946 §3.2 allows
    /// a null geometry): one object a line, told apart from rows and chatts by its shape.
    private func showRemoval(_ id: String) {
        switch command.format {
        case .table: effects.output("-- removed \(TerminalText.escaped(id))\n")
        case .json: effects.output(RowsJSONFormatter.removalLine(id))
        case .geojson: effects.output(GeoJSONFormatter.removalLine(id))
        }
    }

    private func show(_ row: [String?]) {
        switch command.format {
        case .table:
            effects.output(TableFormatter.streamingLine(row, maps: command.endpoint == "getmaps"))
        case .json:
            effects.output(RowsJSONFormatter.line(row))
        case .geojson:
            switch GeoJSONFormatter.line(row) {
            case .feature(let text): effects.output(text)
            case .noLocation: break
            case .badLocation:
                let id = TerminalText.escaped(row[2] ?? "null")
                effects.notice("warning: left out chatt \(id) whose geodata is not [lat, lon, facing, speed]")
            }
        }
    }
}
