import ChattModel
import HTTPCore

/// `GET /map`: a page that shows the chatts in view on a Leaflet map (each chatt, or clusters where there are many)
/// and follows the live feed of its box, and the files it loads, all served from memory: `/map/map.js` and
/// `/map/map.css` (compiled into chatterd from `MapFiles/`, as the page is) and Leaflet under `/map/leaflet/`
/// (Debian's `libjs-leaflet`, read from a directory at start-up by whoever makes the page). Only the files named
/// here are served: any other path under `/map/` is 404, and nothing is looked up on disk per request, so no path
/// can reach beyond them. The page's files run under `contentSecurityPolicy`: no inline script or style (Leaflet
/// styles through the CSSOM, which the policy does not govern).
///
/// Without Leaflet the page answers 503 naming the package; the rest of chatterd is unaffected.
public struct MapPage: Sendable {
    /// One file as it is answered: its bytes and the headers of a 200 (type, tag, caching, and for the page its
    /// security policy).
    struct Asset: Sendable {
        let body: HTTPBody
        let headers: HTTPHeaders
        let etag: EntityTag
    }

    /// One of Leaflet's files that chatterd serves, by its name under the Leaflet directory.
    public struct LeafletFile: Sendable {
        public let name: String
        let contentType: String
        /// Whether the page cannot work without it (else the page works, only without that image).
        public let required: Bool
    }

    /// The Debian package that puts Leaflet in `defaultLeafletDirectory`, named in the 503 without it.
    public static let leafletPackage = "libjs-leaflet"
    /// Where Debian's `libjs-leaflet` installs Leaflet.
    public static let defaultLeafletDirectory = "/usr/share/javascript/leaflet"

    /// The files of Leaflet the page needs: the script and stylesheet, and the images the stylesheet and the
    /// default marker name (relative to the stylesheet, so under `/map/leaflet/images/`).
    public static let leafletFiles = [
        LeafletFile(name: "leaflet.js", contentType: javaScriptType, required: true),
        LeafletFile(name: "leaflet.css", contentType: cssType, required: true),
    ] + ["layers.png", "layers-2x.png", "marker-icon.png", "marker-icon-2x.png", "marker-shadow.png"].map {
        LeafletFile(name: "images/" + $0, contentType: "image/png", required: false)
    }

    /// The page's policy: its own script and styles only, no inline code, images from itself and the
    /// OpenStreetMap tile server, requests to itself only, and never framed. `https://*.tile.openstreetmap.org`
    /// alone would not cover `tile.openstreetmap.org` itself, which is where tiles come from.
    public static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https://tile.openstreetmap.org; "
        + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    static let javaScriptType = "text/javascript; charset=utf-8"
    static let cssType = "text/css; charset=utf-8"
    static let htmlType = "text/html; charset=utf-8"
    /// The page and its own files change with chatterd: always revalidated (a 304 when unchanged).
    static let revalidate = "no-cache"
    /// Leaflet changes only when its package does.
    static let leafletCaching = "public, max-age=86400"

    /// The page; nil without Leaflet.
    private let page: Asset?
    /// Every other file, by its path (`/map/map.js`, `/map/leaflet/leaflet.js`).
    private let assets: [String: Asset]

    /// `/map` without Leaflet: 503.
    public static let unavailable = MapPage(leaflet: nil)

    /// The page with Leaflet's files as read from its directory, by their names in `leafletFiles` (others are
    /// ignored); nil, or a required file missing, makes `/map` answer 503.
    public init(leaflet: [String: [UInt8]]?) {
        var assets = [
            "/map/map.js": Self.asset(PackageResources.map_js, Self.javaScriptType, Self.revalidate),
            "/map/map.css": Self.asset(PackageResources.map_css, Self.cssType, Self.revalidate),
        ]
        let files = leaflet ?? [:]
        for file in Self.leafletFiles {
            guard let bytes = files[file.name] else { continue }
            assets["/map/leaflet/" + file.name] = Self.asset(bytes, file.contentType, Self.leafletCaching)
        }
        let complete = Self.leafletFiles.allSatisfy { !$0.required || files[$0.name] != nil }
        self.assets = assets
        page = complete
            ? Self.asset(
                PackageResources.map_html, Self.htmlType, Self.revalidate,
                extra: [("Content-Security-Policy", Self.contentSecurityPolicy)])
            : nil
    }

    /// Whether `/map` can be served (Leaflet was found).
    public var isAvailable: Bool { page != nil }

    /// 503 for `/map` without Leaflet.
    static let leafletMissing = APIError(
        .serviceUnavailable, "map unavailable: Leaflet not found (install the Debian package \(leafletPackage))")

    /// `GET /map`: the page, or 503 without Leaflet.
    func pageResponse(to request: HTTPRequest) -> HTTPResponse {
        guard let page else { return Self.leafletMissing.response }
        return Self.response(to: request, with: page)
    }

    /// The response for a file under `/map/` named `path`, or nil when there is no such file (then 404). A method
    /// other than GET or HEAD gets 405. The route it is reported under is its path: a fixed, small set.
    func assetResponse(to request: HTTPRequest) -> HTTPResponse? {
        guard let asset = assets[request.path] else { return nil }
        guard request.method == .GET || request.method == .HEAD else {
            return APIError.methodNotAllowed(allow: "GET, HEAD").response.routed(request.path)
        }
        return Self.response(to: request, with: asset).routed(request.path)
    }

    /// 200 with `asset`, or 304 when `If-None-Match` names it; as for the feeds, a 304 keeps the body so that
    /// Content-Length names the 200's length (the server does not send it).
    private static func response(to request: HTTPRequest, with asset: Asset) -> HTTPResponse {
        let condition = EntityTagCondition(fieldValues: request.headers.values("If-None-Match"))
        let status: HTTPStatus = condition?.matches(asset.etag) == true ? .notModified : .ok
        return HTTPResponse(status: status, headers: asset.headers, body: asset.body)
    }

    private static func asset(
        _ bytes: [UInt8], _ contentType: String, _ caching: String, extra: [(String, String)] = []
    ) -> Asset {
        // Invariant: "m-" and hex digits are all `etagc`.
        let etag = EntityTag("m-" + hex(fnv1a(bytes)))!
        let headers = HTTPHeaders(
            [
                ("Content-Type", contentType), ("ETag", etag.fieldValue), ("Cache-Control", caching),
                ("X-Content-Type-Options", "nosniff"),
            ] + extra)
        return Asset(body: HTTPBody(bytes), headers: headers, etag: etag)
    }

    /// FNV-1a, 64 bits: enough to tell versions of a file apart, and the same in every process.
    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
