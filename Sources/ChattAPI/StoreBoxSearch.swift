import ChattModel
import Viewport

/// Where `GET /getmaps?bbox=` finds a box's chatts instead of the feed's viewport index: the ids of the chatts
/// located in the box (the first `limit` in feed order, or the last when `newest`), as the store finds them by
/// `deadline`. bench/viewport.sh's comparator, "PostGIS through chatterd" (`serve --bbox-in-database`); production
/// leaves it nil.
public typealias StoreBoxSearch = @Sendable (
    _ box: BoundingBox, _ limit: Int, _ newest: Bool, _ deadline: ContinuousClock.Instant
) async -> Result<[String], RepositoryError>
