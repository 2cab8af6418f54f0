import ChattFeed
import ChattModel
import HTTPCore
import JSON

/// The paths chatterd serves (docs/API.md "Endpoints"), each with the one method it accepts.
/// The raw value is the canonical path.
public enum ChattRoute: String, CaseIterable, Sendable {
    case root = "/"
    case postMaps = "/postmaps"
    case getMaps = "/getmaps"
    case clusters = "/getmaps/clusters"
    case postChatt = "/postchatt"
    case getChatts = "/getchatts"
    case streamMaps = "/getmaps/stream"
    case streamChatts = "/getchatts/stream"
    case healthz = "/healthz"
    case readyz = "/readyz"
    case metrics = "/metrics"
    /// The live map page; its files are under `/map/` (see `MapPage`).
    case map = "/map"

    /// The route for `path`, which may carry one trailing slash (`/getmaps/` is `/getmaps`).
    public init?(path: String) {
        if let route = ChattRoute(rawValue: path) {
            self = route
        } else if path.hasSuffix("/"), let route = ChattRoute(rawValue: String(path.dropLast())), route != .root {
            // "//" would otherwise become "/" with a trailing slash.
            self = route
        } else {
            return nil
        }
    }

    /// POST for the two posting routes, GET (and so HEAD) for the rest.
    var method: HTTPMethod {
        switch self {
        case .postMaps, .postChatt: .POST
        case .root, .getMaps, .clusters, .getChatts, .streamMaps, .streamChatts, .healthz, .readyz, .metrics, .map:
            .GET
        }
    }

    /// The `Allow` header value of a 405 on this route.
    var allow: String {
        method == .POST ? "POST" : "GET, HEAD"
    }
}
