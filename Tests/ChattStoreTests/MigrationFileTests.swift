@testable import ChattStore
import Testing

@Suite struct MigrationFileTests {
    @Test(arguments: [
        ("0001_create_chatts.sql", "0001"),
        ("0042_add_index_2.sql", "0042"),
        ("12_x.sql", "12"),
    ])
    func versionIsTheLeadingDigits(name: String, version: String) {
        #expect(MigrationFile.version(of: name) == version)
    }

    @Test(arguments: ["create_chatts.sql", "0001.sql", "0001_.sql", "00a1_x.sql", "_0001_x.sql", "0001_bad-name.sql",
                      "0001_ünïcode.sql", "٣_x.sql"])
    func misnamedFilesHaveNoVersion(name: String) {
        #expect(MigrationFile.version(of: name) == nil)
    }

    @Test func theRepositoryMigrationsLoadInOrder() throws {
        let files = try MigrationFile.load(directory: TestDatabase.migrationsDirectory)
        #expect(files.first?.fileName == "0001_create_chatts.sql")
        #expect(files.map(\.version) == files.map(\.version).sorted())
    }

    @Test func misnamedFileIsNamed() throws {
        let scratch = try ScratchDirectory(copying: TestDatabase.migrationsDirectory)
        defer { scratch.remove() }
        try scratch.write("add_things.sql", "SELECT 1;")
        let error = caught { () throws(StoreError) in _ = try MigrationFile.load(directory: scratch.path) }
        #expect(error?.code == .invalidMigration(file: "add_things.sql"))
    }

    @Test func duplicateVersionIsNamed() throws {
        let scratch = try ScratchDirectory(copying: TestDatabase.migrationsDirectory)
        defer { scratch.remove() }
        try scratch.write("0001_again.sql", "SELECT 1;")
        let error = caught { () throws(StoreError) in _ = try MigrationFile.load(directory: scratch.path) }
        #expect(error?.code == .invalidMigration(file: "0001_create_chatts.sql"))
    }

    @Test func missingDirectoryIsNamed() {
        let error = caught { () throws(StoreError) in _ = try MigrationFile.load(directory: "/nonexistent/migrations") }
        #expect(error?.code == .migrationsDirectoryMissing(path: "/nonexistent/migrations"))
        #expect(error?.description.contains("/nonexistent/migrations") == true)
    }
}
