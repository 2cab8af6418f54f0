import ChattModel
import Viewport

/// The parameters of `GET /getmaps/clusters` (docs/API.md): `bbox` (the whole map without it) and `zoom` (without
/// it, the most detailed zoom at which the box fits a screen of `defaultPixels`), each at most once; other query
/// keys are ignored.
struct ClusterQuery: Equatable, Sendable {
    let box: BoundingBox
    let grid: ClusterGrid

    /// The screen a zoom is picked for when none is given, in pixels each way.
    static let defaultPixels = 1024

    static let badBox = APIError.badRequest(
        "bbox must be west,south,east,north in degrees: -180 to 180, -90 to 90, south <= north")
    static let badZoom = APIError.badRequest("zoom must be a whole number from 0 to 20")
    static let tooLarge = APIError.badRequest(
        "bbox spans more than \(ClusterGrid.mostPixels) pixels at this zoom: ask for the zoom a map shows it at")

    /// Reads `bbox` and `zoom` from the query string.
    ///
    /// - Throws: 400 for either malformed or given twice, or a box wider or taller than `ClusterGrid.mostPixels` at
    ///   the zoom (no screen shows that much at once).
    init(query: String?) throws(APIError) {
        var asked: BoundingBox?
        var grid: ClusterGrid?
        for (name, value) in QueryParameters.pairs(of: query) {
            switch name {
            case "bbox":
                guard asked == nil, let parsed = QueryParameters.box(value) else { throw Self.badBox }
                asked = parsed
            case "zoom":
                guard grid == nil, let zoom = QueryParameters.wholeNumber(value, digits: 2),
                    let parsed = ClusterGrid(zoom: zoom)
                else { throw Self.badZoom }
                grid = parsed
            default:
                continue
            }
        }
        let box = asked ?? .wholeMap
        let chosen = grid ?? ClusterGrid.zooms.reversed().lazy.compactMap(ClusterGrid.init(zoom:))
            .first { $0.fits(box, pixels: Self.defaultPixels) } ?? ClusterGrid(zoom: 0)!
        guard chosen.fits(box) else { throw Self.tooLarge }
        self.box = box
        self.grid = chosen
    }
}
