import Testing

@testable import Viewport

@Suite struct BoundingBoxTests {
    @Test func readsFourEdgesInOGCOrder() throws {
        let box = try #require(BoundingBox(parsing: "-83.8,42.2,-83.6,42.4"))
        #expect(box == BoundingBox(west: -83.8, south: 42.2, east: -83.6, north: 42.4))
        #expect(!box.crossesAntimeridian)
        #expect(BoundingBox(parsing: "-180,-90,180,90") != nil)
        #expect(
            BoundingBox(parsing: "+1.5e1,-.5,16.,1E-3") == BoundingBox(west: 15, south: -0.5, east: 16, north: 0.001))
    }

    @Test(arguments: [
        "", "1,2,3", "1,2,3,4,5", "1,2,3,", ",1,2,3", "1,,2,3", "a,1,2,3", "nan,0,1,1", "NaN,0,1,1", "inf,0,1,1",
        "0x1p3,0,1,1", "1 ,0,1,1", " 1,0,1,1", "1,0,1,1 ", "-,0,1,1", ".,0,1,1", "1e,0,1,1", "1e+,0,1,1",
        "1..2,0,1,1", "1.2.3,0,1,1", "--1,0,1,1", "180.0001,0,1,1", "0,0,-180.5,1", "0,-91,1,1", "0,0,1,90.5",
        "0,10,1,5", "1%2C2,3,4,5", "0,0,1,1" + String(repeating: "0", count: 40),
    ])
    func refuses(_ text: String) {
        #expect(BoundingBox(parsing: Substring(text)) == nil)
    }

    @Test func holdsItsEdges() throws {
        let box = try #require(BoundingBox(west: -10, south: -5, east: 10, north: 5))
        for (longitude, latitude) in [(-10.0, -5.0), (10, 5), (0, 0), (-10, 5), (10, -5)] {
            #expect(box.contains(MapPoint(longitude: longitude, latitude: latitude)))
        }
        for (longitude, latitude) in [(-10.000001, 0.0), (10.000001, 0), (0, 5.000001), (0, -5.000001), (.nan, 0)] {
            #expect(!box.contains(MapPoint(longitude: longitude, latitude: latitude)))
        }
    }

    @Test func crossingTheAntimeridianHoldsBothSides() throws {
        let box = try #require(BoundingBox(parsing: "170,-10,-170,10"))
        #expect(box.crossesAntimeridian)
        #expect(box.contains(MapPoint(longitude: 175, latitude: 0)))
        #expect(box.contains(MapPoint(longitude: -175, latitude: 0)))
        #expect(box.contains(MapPoint(longitude: 180, latitude: 10)))
        #expect(box.contains(MapPoint(longitude: -180, latitude: -10)))
        #expect(!box.contains(MapPoint(longitude: 0, latitude: 0)))
        #expect(!box.contains(MapPoint(longitude: 169.9, latitude: 0)))
    }
}

@Suite struct MapPointTests {
    @Test func readsLatitudeThenLongitude() {
        #expect(
            MapPoint(geodata: #"[42.2936,-83.7166,"North","walking"]"#)
                == MapPoint(longitude: -83.7166, latitude: 42.2936))
        #expect(MapPoint(geodata: #" [ -90 , 180.0e0 ,"",""]"#) == MapPoint(longitude: 180, latitude: -90))
        #expect(MapPoint(geodata: "[0,-0.5E+1]") == MapPoint(longitude: -5, latitude: 0))
    }

    @Test(arguments: [
        "", "[]", "[42]", "[42,]", "42,-83", "[\"42\",-83]", "[42,\"-83\"]", "[90.1,0]", "[0,-180.01]", "[01,0]",
        "[1.,0]", "[.5,0]", "[+1,0]", "[1e,0]", "[NaN,0]", "[1e400,0]", "[0 0]", "{\"lat\":1}",
    ])
    func locatesNothingElse(_ geodata: String) {
        #expect(MapPoint(geodata: geodata) == nil)
    }
}
