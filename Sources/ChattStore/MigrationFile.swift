#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One `NNNN_name.sql` file from the migrations directory.
struct MigrationFile: Sendable, Equatable {
    /// The digits before the first underscore, recorded in `schema_migrations.version`.
    let version: String
    /// The file name, for error messages.
    let fileName: String
    /// The file's SQL text.
    let sql: String

    /// Every `.sql` file in `directory`, in name order (other files, such as a README, are ignored).
    /// - Throws: `.migrationsDirectoryMissing`, or `.invalidMigration` naming a misnamed, unreadable or
    ///   duplicate-version file.
    static func load(directory: String) throws(StoreError) -> [MigrationFile] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw StoreError(.migrationsDirectoryMissing(path: directory))
        }
        var files: [MigrationFile] = []
        for name in names.sorted() where name.hasSuffix(".sql") && !name.hasPrefix(".") {
            let file = try load(name, in: directory)
            guard !files.contains(where: { $0.version == file.version }) else {
                throw StoreError(.invalidMigration(file: name), detail: "version \(file.version) is used twice")
            }
            files.append(file)
        }
        return files
    }

    private static func load(_ name: String, in directory: String) throws(StoreError) -> MigrationFile {
        guard let version = version(of: name) else {
            throw StoreError(.invalidMigration(file: name), detail: "expected NNNN_name.sql")
        }
        let url = URL(filePath: directory).appending(path: name)
        guard let data = try? Data(contentsOf: url) else {
            throw StoreError(.invalidMigration(file: name), detail: "unreadable")
        }
        guard let sql = String(validating: data, as: UTF8.self) else {
            throw StoreError(.invalidMigration(file: name), detail: "not UTF-8")
        }
        return MigrationFile(version: version, fileName: name, sql: sql)
    }

    /// The leading digits of `NNNN_name.sql`, or nil when the name has another shape.
    static func version(of name: String) -> String? {
        let stem = name.dropLast(".sql".count)
        guard let underscore = stem.firstIndex(of: "_") else { return nil }
        let digits = stem[..<underscore]
        let label = stem[stem.index(after: underscore)...]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              !label.isEmpty, label.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
        else { return nil }
        return String(digits)
    }
}
