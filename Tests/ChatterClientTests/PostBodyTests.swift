import ChattModel
@testable import ChatterClient
import JSON
import Testing

@Suite struct PostBodyTests {
    @Test func geodataIsTheAppsArrayInAString() {
        let location = Location(latitude: 42.2936, longitude: -83.7166, facing: "North", speed: "walking")
        #expect(location.geodataText == #"[42.2936,-83.7166,"North","walking"]"#)
        #expect(Location(latitude: 0, longitude: 180).geodataText == #"[0.0,180.0,"unknown","unknown"]"#)
    }

    @Test func geodataTextPassesTheServersValidation() throws {
        let location = Location(latitude: -89.999999, longitude: 1e-7, facing: #"say "hi"\ "#, speed: "é\n")
        let parsed = try Geodata(parsing: location.geodataText)
        #expect(parsed == Geodata(latitude: -89.999999, longitude: 1e-7, facing: #"say "hi"\ "#, speed: "é\n"))
    }

    @Test func parsingInitializerKeepsTheNumbers() throws {
        let location = try Location(latitude: "+42.50", longitude: "-1e1", facing: nil, speed: "driving")
        #expect(location == Location(latitude: 42.5, longitude: -10, facing: "unknown", speed: "driving"))
    }

    @Test func bodyWithLocation() throws {
        let location = Location(latitude: 1.5, longitude: -2.25, facing: "N", speed: "slow")
        let body = PostBody.encode(name: "al\"ice", message: "hi\u{1}", location: location)
        let value = try JSONParser.parse(body)
        #expect(value["name"] == .string("al\"ice"))
        #expect(value["message"] == .string("hi\u{1}"))
        #expect(value["geodata"] == .string(#"[1.5,-2.25,"N","slow"]"#))
        #expect(value.objectKeys == ["name", "message", "geodata"])
    }

    @Test func bodyWithoutLocationSendsNull() {
        let body = PostBody.encode(name: "bob", message: "", location: nil)
        #expect(String(decoding: body, as: UTF8.self) == #"{"name":"bob","message":"","geodata":null}"#)
    }
}
