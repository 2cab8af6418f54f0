import JSON

/// A validated chatt ready to be stored.
public struct NewChatt: Sendable, Equatable {
    public var name: String
    public var message: String
    /// The geodata string exactly as posted (a JSON array in a string), or nil.
    public var geodata: String?

    public init(name: String, message: String, geodata: String? = nil) {
        self.name = name
        self.message = message
        self.geodata = geodata
    }
}

/// A stored chatt, with every field already in its wire form.
public struct StoredChatt: Sendable, Equatable {
    public var name: String
    public var message: String
    /// Lower-case canonical UUID.
    public var id: String
    /// UTC, ISO 8601 with microseconds and `Z`, e.g. `2026-03-25T08:11:59.123456Z`.
    public var timestamp: String
    public var geodata: String?

    public init(name: String, message: String, id: String, timestamp: String, geodata: String?) {
        self.name = name
        self.message = message
        self.id = id
        self.timestamp = timestamp
        self.geodata = geodata
    }
}
