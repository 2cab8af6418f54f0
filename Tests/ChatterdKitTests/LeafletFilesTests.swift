@testable import ChatterdKit
import ChattAPI
import Foundation
import Testing

/// `--leaflet-dir`: the listed files are read at start-up, nothing else is, and a missing directory leaves `/map`
/// unavailable rather than stopping the server.
@Suite struct LeafletFilesTests {
    /// A directory laid out as Debian's libjs-leaflet, plus things that must not be served.
    private func makeDirectory(without omitted: Set<String> = []) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("leaflet-\(UUID())")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("images"), withIntermediateDirectories: true)
        for file in MapPage.leafletFiles where !omitted.contains(file.name) {
            try Data("contents of \(file.name)".utf8).write(to: root.appendingPathComponent(file.name))
        }
        try Data("secret".utf8).write(to: root.appendingPathComponent("leaflet-src.js"))
        try Data("secret".utf8).write(to: root.appendingPathComponent("images/other.png"))
        return root
    }

    @Test func readsExactlyTheListedFiles() throws {
        let root = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let leaflet = LeafletFiles(directory: root.path)
        #expect(leaflet.missingRequired.isEmpty)
        #expect(Set(leaflet.files.keys) == Set(MapPage.leafletFiles.map(\.name)))
        #expect(leaflet.files["leaflet.js"] == Array("contents of leaflet.js".utf8))
        #expect(MapPage(leaflet: leaflet.files).isAvailable)
    }

    @Test func aMissingImageIsTolerated() throws {
        let root = try makeDirectory(without: ["images/layers-2x.png"])
        defer { try? FileManager.default.removeItem(at: root) }
        let leaflet = LeafletFiles(directory: root.path)
        #expect(leaflet.missingRequired.isEmpty && leaflet.files["images/layers-2x.png"] == nil)
        #expect(MapPage(leaflet: leaflet.files).isAvailable)
    }

    @Test func aMissingScriptOrDirectoryIsNamed() throws {
        let root = try makeDirectory(without: ["leaflet.js"])
        defer { try? FileManager.default.removeItem(at: root) }
        let partial = LeafletFiles(directory: root.path)
        #expect(partial.missingRequired == ["leaflet.js"])
        #expect(!MapPage(leaflet: partial.files).isAvailable)
        let none = LeafletFiles(directory: root.appendingPathComponent("nowhere").path)
        #expect(none.files.isEmpty && none.missingRequired == ["leaflet.js", "leaflet.css"])
    }

    @Test func aDirectoryInPlaceOfAFileIsNotRead() throws {
        let root = try makeDirectory(without: ["leaflet.css"])
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("leaflet.css"), withIntermediateDirectories: false)
        #expect(LeafletFiles(directory: root.path).missingRequired == ["leaflet.css"])
    }

    @Test func theDefaultIsDebiansDirectory() throws {
        #expect(try ServeOptions(arguments: [], environment: [:]).leafletDirectory == "/usr/share/javascript/leaflet")
        #expect(try ServeOptions(arguments: ["--leaflet-dir", "/srv/leaflet"], environment: [:]).leafletDirectory
            == "/srv/leaflet")
    }
}
