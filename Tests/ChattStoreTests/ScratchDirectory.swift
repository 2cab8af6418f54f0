import Foundation

/// A temporary copy of a migrations directory that tests may add files to.
struct ScratchDirectory {
    let path: String

    init(copying source: String) throws {
        path = FileManager.default.temporaryDirectory.appending(path: "store-migrations-\(UUID())").path
        try FileManager.default.copyItem(atPath: source, toPath: path)
    }

    func write(_ name: String, _ sql: String) throws {
        try Data(sql.utf8).write(to: URL(filePath: path).appending(path: name))
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
