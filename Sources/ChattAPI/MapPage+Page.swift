// The page's own files, compiled into chatterd as text (no SwiftPM resources, nothing to install beside the binary):
// the HTML of `/map` and `/map/map.css` here, `/map/map.js` in MapPage+Script.swift. They run under
// `MapPage.contentSecurityPolicy`: no inline script or style (Leaflet's own styling goes through the CSSOM, which
// the policy does not govern), and no image but the page's own, `data:` and OpenStreetMap's tiles.

extension MapPage {
    /// `GET /map`. Absolute paths, so that `/map/` loads the same files. The icon is an empty `data:` URL, so the
    /// browser asks for no `/favicon.ico`.
    static let pageText = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>chatterd map</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/map/leaflet/leaflet.css">
        <link rel="stylesheet" href="/map/map.css">
        <script src="/map/leaflet/leaflet.js" defer></script>
        <script src="/map/map.js" defer></script>
        </head>
        <body data-markers="0" data-feed="loading">
        <div id="map"></div>
        <div id="status" role="status" aria-live="polite"></div>
        </body>
        </html>

        """#

    /// `GET /map/map.css`: the map fills the window, on a plain background where tiles cannot be loaded.
    static let styleText = #"""
        html, body { height: 100%; margin: 0; }
        body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; }
        #map { position: absolute; top: 0; right: 0; bottom: 0; left: 0; background: #e4e8ea; }
        #status {
            position: absolute; z-index: 1000; top: 10px; left: 50%; transform: translateX(-50%);
            padding: 2px 10px; border-radius: 10px; background: rgba(255, 255, 255, 0.9); color: #333;
            font-size: 12px; pointer-events: none;
        }
        #status:empty { display: none; }
        .chatt { max-width: 260px; }
        .chatt-name { font-weight: 600; overflow-wrap: anywhere; }
        .chatt-message { margin: 2px 0 4px; white-space: pre-wrap; overflow-wrap: anywhere; }
        .chatt-time, .chatt-motion { display: block; color: #555; font-size: 12px; }

        """#
}
