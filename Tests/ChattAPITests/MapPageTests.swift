import ChattAPI
import ChattFeed
import HTTPCore
import TestSupport
import Testing

private func request(_ method: HTTPMethod, _ path: String, headers: [(String, String)] = []) -> HTTPRequest {
    HTTPRequest(method: method, target: path, path: path, headers: HTTPHeaders(headers))
}

private func text(_ response: HTTPResponse) -> String {
    String(decoding: response.body, as: UTF8.self)
}

/// Stand-ins for Debian's libjs-leaflet files: the router serves whatever bytes it was given.
private let leaflet: [String: [UInt8]] = [
    "leaflet.js": Array("window.L = {};".utf8), "leaflet.css": Array(".leaflet-container {}".utf8),
    "images/marker-icon.png": [0x89, 0x50, 0x4E, 0x47], "leaflet-src.js": Array("not listed".utf8),
]

@Suite struct MapPageTests {
    let router = ChattRouter(feed: ChattFeed(repository: InMemoryChattRepository()), mapPage: MapPage(leaflet: leaflet))

    @Test(arguments: ["/map", "/map/"])
    func thePageIsHTMLUnderAStrictPolicy(path: String) {
        let response = router.respond(to: request(.GET, path))
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(response.headers["X-Content-Type-Options"] == "nosniff")
        #expect(response.route == "/map")
        let policy = response.headers["Content-Security-Policy"] ?? ""
        for directive in [
            "default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "base-uri 'none'",
            "form-action 'none'", "frame-ancestors 'none'",
        ] {
            #expect(policy.contains(directive + ";") || policy.hasSuffix(directive), "\(directive)")
        }
        #expect(policy.contains("img-src 'self' data: https://tile.openstreetmap.org;"))
        #expect(!policy.contains("unsafe"), "no 'unsafe-inline' nor 'unsafe-eval'")
        let page = text(response)
        for file in ["/map/leaflet/leaflet.js", "/map/leaflet/leaflet.css", "/map/map.js", "/map/map.css"] {
            #expect(page.contains("\"\(file)\""), "\(file)")
        }
        #expect(!page.contains("<style") && !page.contains("style=") && !page.contains("<script>"), "nothing inline")
    }

    @Test(arguments: [
        ("/map/map.js", "text/javascript; charset=utf-8"), ("/map/map.css", "text/css; charset=utf-8"),
        ("/map/leaflet/leaflet.js", "text/javascript; charset=utf-8"),
        ("/map/leaflet/leaflet.css", "text/css; charset=utf-8"), ("/map/leaflet/images/marker-icon.png", "image/png"),
    ])
    func servesItsFilesWithTypeTagAndCaching(path: String, type: String) {
        let response = router.respond(to: request(.GET, path))
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"] == type)
        #expect(response.headers["X-Content-Type-Options"] == "nosniff")
        #expect(response.headers["ETag"]?.hasPrefix("\"m-") == true)
        #expect(response.headers["Cache-Control"] != nil)
        #expect(response.route == path)
    }

    @Test func leafletIsServedAsRead() {
        #expect(text(router.respond(to: request(.GET, "/map/leaflet/leaflet.js"))) == "window.L = {};")
        #expect(Array(router.respond(to: request(.GET, "/map/leaflet/images/marker-icon.png")).body)
            == [0x89, 0x50, 0x4E, 0x47])
    }

    @Test func theScriptReadsTheFeedAndTheStreamAndWritesChattTextAsText() {
        let script = text(router.respond(to: request(.GET, "/map/map.js")))
        #expect(script.contains("'/getmaps'") && script.contains("'/getmaps/stream'"))
        #expect(script.contains("'Last-Event-ID'") && script.contains("'Feed-Position'"))
        #expect(script.contains("document.body.dataset.markers") || script.contains("body.dataset.markers"))
        #expect(!script.contains("innerHTML") && !script.contains("eval(") && !script.contains("new Function"))
    }

    @Test(arguments: ["/map", "/map/map.js", "/map/leaflet/leaflet.css"])
    func headIsGetAndAMatchingTagIs304(path: String) {
        let get = router.respond(to: request(.GET, path))
        #expect(router.respond(to: request(.HEAD, path)) == get)
        let tag = get.headers["ETag"] ?? ""
        let revalidated = router.respond(to: request(.GET, path, headers: [("If-None-Match", tag)]))
        #expect(revalidated.status == .notModified)
        #expect(revalidated.headers["ETag"] == tag)
        let other = router.respond(to: request(.GET, path, headers: [("If-None-Match", "\"m-0\"")]))
        #expect(other.status == .ok)
    }

    @Test(arguments: ["/map", "/map/", "/map/map.js", "/map/leaflet/images/marker-icon.png"])
    func otherMethodsAre405(path: String) {
        for method in [HTTPMethod.POST, .PUT, .DELETE, .OPTIONS] {
            let response = router.respond(to: request(method, path))
            #expect(response.status == .methodNotAllowed, "\(method) \(path)")
            #expect(response.headers["Allow"] == "GET, HEAD")
        }
    }

    @Test(arguments: [
        "/map/x", "/map//", "/map/map.js/", "/map//map.js", "/map/MAP.JS", "/map/map.html", "/map/index.html",
        "/map/leaflet", "/map/leaflet/", "/map/leaflet/leaflet-src.js", "/map/leaflet/images/",
        "/map/leaflet/images/layers.png", "/map/leaflet/../map.js", "/map/leaflet/./leaflet.js",
        "/map/leaflet/..%2fleaflet.js", "/map/leaflet/%2e%2e/%2e%2e/etc/passwd", "/map/leaflet/../../etc/passwd",
        "/map/leaflet//leaflet.js", "/map/leaflet/images/../leaflet.js", "/map/../getmaps", "/map.js", "/mapx",
        "/MAP", "/map/.", "/map/..",
    ])
    func unknownNamesAndTraversalAre404(path: String) {
        for method in [HTTPMethod.GET, .HEAD, .POST] {
            let response = router.respond(to: request(method, path))
            #expect(response.status == .notFound, "\(method) \(path)")
            #expect(text(response) == #"{"error":"not found"}"#)
        }
    }

    @Test func withoutLeafletThePageIs503NamingThePackageAndItsOwnFilesStay() {
        for page in [MapPage.unavailable, MapPage(leaflet: ["leaflet.js": Array("x".utf8)])] {
            let router = ChattRouter(feed: ChattFeed(repository: InMemoryChattRepository()), mapPage: page)
            #expect(!page.isAvailable)
            let response = router.respond(to: request(.GET, "/map"))
            #expect(response.status == .serviceUnavailable)
            #expect(response.headers["Content-Type"] == "application/json")
            #expect(text(response).hasPrefix(#"{"error":"map unavailable"#) && text(response).contains("libjs-leaflet"))
            #expect(router.respond(to: request(.GET, "/map/leaflet/leaflet.css")).status == .notFound)
            #expect(router.respond(to: request(.GET, "/map/map.js")).status == .ok)
            #expect(router.respond(to: request(.GET, "/getmaps")).status == .ok, "the rest of the API is unaffected")
        }
    }

    @Test func aRouterMadeWithoutAMapPageAnswers503() {
        let plain = ChattRouter(feed: ChattFeed(repository: InMemoryChattRepository()))
        #expect(plain.respond(to: request(.GET, "/map")).status == .serviceUnavailable)
    }

    @Test func theFilesLeafletNeedsAreListedAndTheScriptAndStylesheetAreRequired() {
        let required = MapPage.leafletFiles.filter(\.required).map(\.name)
        #expect(required == ["leaflet.js", "leaflet.css"])
        // Only plain names: no listed name can step out of the directory it is read from.
        for file in MapPage.leafletFiles {
            #expect(!file.name.hasPrefix("/") && !file.name.split(separator: "/").contains(".."), "\(file.name)")
        }
    }
}
