import ChattAPI
import Foundation

/// Leaflet's files for `/map` (`MapPage.leafletFiles`), read once at start-up from `--leaflet-dir` (Debian's
/// `libjs-leaflet`) and then served from memory. Only the names `MapPage` lists are read; anything else in the
/// directory is never looked at.
struct LeafletFiles {
    /// Larger than any of Leaflet's files (its unminified script is about 420 KiB); a bigger one is not read.
    static let maximumFileBytes = 4 << 20

    /// The files read, by their names in `MapPage.leafletFiles`.
    var files: [String: [UInt8]] = [:]
    /// The required files that could not be read; when any is, `/map` answers 503.
    var missingRequired: [String] = []

    /// The files of `MapPage.leafletFiles` found in `directory` as regular files (symbolic links followed) no
    /// larger than `maximumFileBytes`.
    init(directory: String) {
        let base = URL(fileURLWithPath: directory, isDirectory: true)
        for file in MapPage.leafletFiles {
            if let bytes = Self.read(base.appendingPathComponent(file.name)) {
                files[file.name] = bytes
            } else if file.required {
                missingRequired.append(file.name)
            }
        }
    }

    private static func read(_ url: URL) -> [UInt8]? {
        guard let values = try? url.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey]),
            values.isRegularFile == true, let size = values.fileSize, size <= maximumFileBytes,
            let data = try? Data(contentsOf: url), data.count <= maximumFileBytes
        else { return nil }
        return [UInt8](data)
    }
}
