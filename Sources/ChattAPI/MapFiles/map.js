// chatterd's live map (GET /map): what is in view, kept live. Runs under a strict Content-Security-Policy: no
// inline code, no eval, and text from chatts only ever through textContent (a popup is a DOM node, never HTML).
//
// The contract is docs/API.md's. Each time the view settles the page asks GET /getmaps/clusters for the box and
// zoom in view. Up to MOST_CHATTS chatts it then reads them as rows (GET /getmaps?bbox=&newest=, rows being
// [name, message, id, timestamp, geodata]) and shows a marker per chatt; beyond that it shows the clusters (a
// marker per 64-pixel cell, with its count). Either answer carries, in Feed-Position, the position of the feed it
// shows; GET /getmaps/stream?bbox= with that position as Last-Event-ID then sends exactly the chatts of the box
// after it ("id: <position>", "data: <row>"), removals ("event: delete", "data: <id>"), id-only events that move
// the position, heartbeats as comment lines, and "event: reset" when the position can no longer be resumed from
// (the view is then read again). fetch, not EventSource: EventSource cannot send Last-Event-ID on its first
// request.
//
// The view is in the address (#zoom/lat/lon), so a link shows the same place. Test hooks, readable without
// weakening the policy, on the body: data-markers (markers on the map), data-chatts (chatts they stand for),
// data-mode (chatts, clusters), data-view (the box and zoom drawn), data-feed (loading, live, retrying) and
// data-tiles (loaded, unavailable).
'use strict';

(function () {
    const FEED = '/getmaps';
    const CLUSTERS = '/getmaps/clusters';
    const STREAM = '/getmaps/stream';
    // A view of at most this many chatts shows each of them; one of more shows clusters, but at the closest zoom
    // (where clusters cannot split) the newest this many.
    const MOST_CHATTS = 1000;
    // A view is read once the map has stayed put this long, so a pan or a zoom is read once, at its end.
    const SETTLE_MS = 150;
    // While chatts come and go in a clustered view its counts are read again, at most this often.
    const RECOUNT_MS = 2000;
    const FIRST_RETRY_MS = 1000;
    const RETRY_CAP_MS = 30000;
    const MAX_ZOOM = 19;

    const body = document.body;
    const status = document.getElementById('status');

    const map = L.map('map', {worldCopyJump: true, maxZoom: MAX_ZOOM});
    // Without the network (or OpenStreetMap) tiles fail one by one; the markers stay on the plain background.
    L.tileLayer('https://tile.openstreetmap.org/{z}/{x}/{y}.png', {
        maxZoom: MAX_ZOOM,
        attribution: '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors',
    }).on('tileload', function () {
        body.dataset.tiles = 'loaded';
    }).on('tileerror', function () {
        if (body.dataset.tiles !== 'loaded') body.dataset.tiles = 'unavailable';
    }).addTo(map);

    const markers = L.featureGroup().addTo(map);
    const shown = new Map();  // in the chatts mode, the id of each chatt on the map to its marker
    let mode = null;          // 'chatts' or 'clusters' once a view was drawn
    let drawn = null;         // the view drawn: {box, zoom}
    let wanted = null;        // the view being read, or drawn once read
    let chatts = 0;           // the chatts the markers stand for
    let notice = '';          // what the status line says while the view is live
    // The feed position the map shows: the last view's Feed-Position, then each event's id as it is read (so a
    // stream that breaks mid-way is resumed from its last event, not from where it started); null while unknown.
    let position = null;
    // Aborts whatever reads the map's data now (a view, the stream, a back-off), so that the next view is read.
    let cycle = new AbortController();

    class Reset extends Error {}

    function showState(state, text) {
        body.dataset.feed = state;
        status.textContent = text;
    }

    function showCounts() {
        body.dataset.markers = String(markers.getLayers().length);
        body.dataset.chatts = String(chatts);
        body.dataset.mode = mode || '';
    }

    // --- the view ---------------------------------------------------------------------------------------------

    // The view in the address, or null: "#zoom/lat/lon".
    function viewInAddress() {
        const parts = location.hash.slice(1).split('/').map(Number);
        if (parts.length !== 3 || !parts.every(isFinite)) return null;
        const [zoom, lat, lon] = parts;
        if (zoom < 0 || zoom > MAX_ZOOM || Math.abs(lat) > 90 || Math.abs(lon) > 180) return null;
        return {zoom: Math.round(zoom), center: [lat, lon]};
    }

    // A longitude moved into [-180, 180).
    function wrapped(lon) {
        return ((lon + 180) % 360 + 360) % 360 - 180;
    }

    // The box and zoom in view, as the API takes them: "west,south,east,north" in degrees, widened outward to six
    // decimals; west > east when the view crosses the antimeridian, the whole width when it shows every longitude.
    function viewNow() {
        const bounds = map.getBounds();
        const down = function (x) { return Math.floor(x * 1e6) / 1e6; };
        const up = function (x) { return Math.ceil(x * 1e6) / 1e6; };
        let west = -180;
        let east = 180;
        if (bounds.getEast() - bounds.getWest() < 360) {
            west = down(wrapped(bounds.getWest()));
            east = up(west + (bounds.getEast() - bounds.getWest()));
            if (east > 180) east = up(east - 360);
        }
        const south = Math.max(-90, down(bounds.getSouth()));
        const north = Math.min(90, up(bounds.getNorth()));
        const edges = [west, south, east, north].map(function (x) { return x.toFixed(6); });
        return {box: edges.join(','), zoom: Math.max(0, Math.min(20, Math.round(map.getZoom())))};
    }

    // Once the map stays put, the view in the address is the new one and it is read (after whatever reads now
    // stops).
    let settling = null;
    map.on('moveend', function () {
        clearTimeout(settling);
        settling = setTimeout(function () {
            const center = map.getCenter();
            history.replaceState(null, '', '#' + map.getZoom() + '/' + center.lat.toFixed(5) + '/'
                + wrapped(center.lng).toFixed(5));
            const view = viewNow();
            if (wanted === null || view.box !== wanted.box || view.zoom !== wanted.zoom) cycle.abort();
        }, SETTLE_MS);
    });

    window.addEventListener('hashchange', function () {
        const view = viewInAddress();
        if (view) map.setView(view.center, view.zoom);
    });

    // --- markers ----------------------------------------------------------------------------------------------

    function append(parent, tag, className, text) {
        const element = document.createElement(tag);
        element.className = className;
        element.textContent = text;
        parent.appendChild(element);
        return element;
    }

    function localTime(timestamp) {
        const date = new Date(timestamp);
        return isNaN(date.getTime()) ? timestamp : date.toLocaleString();
    }

    // The popup of a chatt: a node built with textContent only.
    function popupOf(chatt) {
        const box = document.createElement('div');
        box.className = 'chatt';
        append(box, 'div', 'chatt-name', chatt.name);
        append(box, 'div', 'chatt-message', chatt.message);
        const time = append(box, 'time', 'chatt-time', localTime(chatt.timestamp));
        time.dateTime = chatt.timestamp;
        append(box, 'span', 'chatt-motion', 'facing ' + chatt.facing + ', speed ' + chatt.speed);
        return box;
    }

    function chattMarker(chatt) {
        // title and alt are set as properties by Leaflet: text, not HTML.
        return L.marker([chatt.lat, chatt.lon], {title: chatt.name, alt: chatt.name}).bindPopup(popupOf(chatt));
    }

    // A row's chatt, or null: no geodata, or geodata that is not [lat, lon, facing, speed] in range.
    function chattOfRow(row) {
        if (!Array.isArray(row) || row.length !== 5 || typeof row[2] !== 'string' || typeof row[4] !== 'string') {
            return null;
        }
        let geodata;
        try {
            geodata = JSON.parse(row[4]);
        } catch (error) {
            return null;
        }
        if (!Array.isArray(geodata) || geodata.length !== 4) return null;
        const [lat, lon, facing, speed] = geodata;
        if (typeof lat !== 'number' || typeof lon !== 'number' || !isFinite(lat) || !isFinite(lon)) return null;
        if (Math.abs(lat) > 90 || Math.abs(lon) > 180) return null;
        return {
            id: row[2], name: String(row[0]), message: String(row[1]), timestamp: String(row[3]),
            lat: lat, lon: lon, facing: String(facing), speed: String(speed),
        };
    }

    // Adds a marker for the row unless it has no place or is shown already; in the chatts mode only.
    function add(row) {
        const chatt = chattOfRow(row);
        if (chatt === null || shown.has(chatt.id)) return;
        shown.set(chatt.id, chattMarker(chatt).addTo(markers));
        chatts = shown.size;
    }

    // Takes away the marker of a removed chatt, if it has one; in the chatts mode only.
    function remove(id) {
        const marker = shown.get(id);
        if (marker === undefined) return;
        markers.removeLayer(marker);
        shown.delete(id);
        chatts = shown.size;
    }

    // Shows these rows, one marker each. Markers of chatts that stay are kept, so an open popup stays open.
    function drawChatts(rows) {
        if (mode !== 'chatts') {
            markers.clearLayers();
            shown.clear();
            mode = 'chatts';
        }
        const ids = new Set(rows.map(function (row) { return Array.isArray(row) ? row[2] : undefined; }));
        Array.from(shown.keys()).forEach(function (id) { if (!ids.has(id)) remove(id); });
        rows.forEach(add);
        chatts = shown.size;
    }

    // A cluster: a round marker with its count; a click zooms in on it.
    function clusterMarker(lat, lon, count) {
        const label = document.createElement('span');
        label.textContent = count < 1000 ? String(count) : count < 1e6 ? Math.floor(count / 1000) + 'k'
            : Math.floor(count / 1e6) + 'M';
        const size = count < 100 ? 30 : count < 10000 ? 38 : 46;
        const icon = L.divIcon({
            html: label, className: 'cluster ' + (count < 100 ? 'few' : count < 10000 ? 'some' : 'many'),
            iconSize: [size, size],
        });
        return L.marker([lat, lon], {icon: icon, title: count + ' chatts', alt: count + ' chatts'})
            .on('click', function () { map.setView([lat, lon], Math.min(MAX_ZOOM, map.getZoom() + 2)); });
    }

    // Shows the features of a /getmaps/clusters answer: clusters and the chatts alone in their cells.
    function drawClusters(features) {
        markers.clearLayers();
        shown.clear();
        mode = 'clusters';
        chatts = 0;
        features.forEach(function (feature) {
            const [lon, lat] = feature.geometry.coordinates;
            const p = feature.properties;
            if (p.cluster) {
                clusterMarker(lat, lon, p.point_count).addTo(markers);
                chatts += p.point_count;
            } else {
                chattMarker({
                    name: String(p.name), message: String(p.message), timestamp: String(p.timestamp), lat: lat,
                    lon: lon, facing: String(p.facing), speed: String(p.speed),
                }).addTo(markers);
                chatts += 1;
            }
        });
    }

    // --- reading --------------------------------------------------------------------------------------------

    // The JSON of a GET and its Feed-Position; throws unless 200.
    async function read(url, signal) {
        const response = await fetch(url, {cache: 'no-store', headers: {'Accept': 'application/json'}, signal: signal});
        if (!response.ok) throw new Error(url + ' answered ' + response.status);
        return {value: await response.json(), position: response.headers.get('Feed-Position')};
    }

    function featuresOf(answer) {
        const features = answer.value && answer.value.features;
        if (!Array.isArray(features)) throw new Error(CLUSTERS + ' sent no features');
        return features;
    }

    function countOf(features) {
        return features.reduce(function (sum, feature) {
            return sum + (feature.properties.cluster ? feature.properties.point_count : 1);
        }, 0);
    }

    // Reads the view and draws it; its position is where the stream is followed from. With `fit` (the first view,
    // when the address names none) a map of few chatts is fitted to them at once, and the fitted view is the one
    // drawn and followed.
    async function load(view, signal, fit) {
        const clusters = await read(CLUSTERS + '?bbox=' + view.box + '&zoom=' + view.zoom, signal);
        const features = featuresOf(clusters);
        const count = countOf(features);
        if (count <= MOST_CHATTS || view.zoom >= MAX_ZOOM) {
            const rows = await read(FEED + '?bbox=' + view.box + '&newest=' + MOST_CHATTS, signal);
            if (!Array.isArray(rows.value)) throw new Error(FEED + ' is not an array');
            drawChatts(rows.value);
            position = rows.position;
            if (fit && shown.size > 0) {
                map.fitBounds(markers.getBounds().pad(0.2), {maxZoom: 12, animate: false});
                view = wanted = viewNow();
            }
        } else {
            drawClusters(features);
            position = clusters.position;
        }
        notice = count > MOST_CHATTS && mode === 'chatts'
            ? 'the newest ' + MOST_CHATTS + ' of ' + count + ' chatts here' : '';
        drawn = view;
        body.dataset.view = view.box + '/' + view.zoom;
        showCounts();
    }

    // In the clusters mode, the counts of the view drawn, read again a little after chatts came or went.
    let recounting = null;
    function recountSoon() {
        if (recounting !== null) return;
        const view = drawn;
        recounting = setTimeout(async function () {
            try {
                const features = featuresOf(await read(CLUSTERS + '?bbox=' + view.box + '&zoom=' + view.zoom));
                if (drawn !== view || mode !== 'clusters') return;
                if (countOf(features) <= MOST_CHATTS) {
                    cycle.abort();  // few enough to show each: read the view again
                } else {
                    drawClusters(features);
                    showCounts();
                }
            } catch (error) {
                // The next change (or view) reads them again.
            } finally {
                recounting = null;
            }
        }, RECOUNT_MS);
    }

    // An event stream (the HTML standard's "interpreting an event stream"), fed text as it arrives: lines end with
    // CRLF, LF or CR; "field: value" lines build an event and a blank line dispatches it; lines starting with ":"
    // are comments (heartbeats). onEvent(type, data) is called per event; lastId is the id of the last event
    // dispatched (an id line with no data still moves it, as the standard says).
    class EventStreamParser {
        constructor(onEvent) {
            this.onEvent = onEvent;
            this.pending = '';
            this.started = false;
            this.data = null;
            this.type = '';
            this.idBuffer = null;
            this.lastId = null;
        }

        push(text) {
            let buffer = this.pending + text;
            if (!this.started && buffer.length > 0) {
                this.started = true;
                if (buffer.charCodeAt(0) === 0xFEFF) buffer = buffer.slice(1);
            }
            const ends = /\r\n|\r|\n/g;
            let start = 0;
            let match;
            while ((match = ends.exec(buffer)) !== null) {
                // A CR last may be the first half of a CRLF split across reads: wait for the next one.
                if (match[0] === '\r' && match.index === buffer.length - 1) break;
                this.line(buffer.slice(start, match.index));
                start = ends.lastIndex;
            }
            this.pending = buffer.slice(start);
        }

        line(text) {
            if (text === '') return this.dispatch();
            if (text[0] === ':') return;
            const colon = text.indexOf(':');
            const field = colon < 0 ? text : text.slice(0, colon);
            let value = colon < 0 ? '' : text.slice(colon + 1);
            if (value[0] === ' ') value = value.slice(1);
            if (field === 'data') {
                this.data = this.data === null ? value : this.data + '\n' + value;
            } else if (field === 'event') {
                this.type = value;
            } else if (field === 'id') {
                if (value.indexOf('\0') < 0) this.idBuffer = value;
            }
            // "retry" and unknown fields are ignored: the back-off is the page's own.
        }

        dispatch() {
            this.lastId = this.idBuffer;
            const type = this.type || 'message';
            const data = this.data;
            this.type = '';
            this.data = null;
            // The standard dispatches nothing without data; a reset counts either way.
            if (data !== null || type === 'reset') this.onEvent(type, data);
        }
    }

    // A chatt or a removal from the stream, on the map: in the chatts mode its marker comes or goes (and a view
    // grown past MOST_CHATTS is read again, as clusters, or at the closest zoom loses its oldest marker); in the
    // clusters mode the counts are read again soon.
    function apply(type, value) {
        if (mode === 'clusters') return recountSoon();
        if (type === 'message') add(value);
        else if (typeof value === 'string') remove(value);
        if (shown.size > MOST_CHATTS) {
            if (drawn.zoom < MAX_ZOOM) return cycle.abort();
            remove(shown.keys().next().value);  // the first shown is the oldest: rows and events come in feed order
        }
        showCounts();
    }

    // Follows the stream of the view drawn from `position`, moving `position` to each event's id; returns when
    // the stream ends, throws Reset on a reset event, and throws on anything else that stops it. `onOpen` is
    // called once the server answers 200 and sends its first bytes.
    async function follow(signal, onOpen) {
        const headers = {'Accept': 'text/event-stream'};
        if (position !== null) headers['Last-Event-ID'] = position;
        const url = STREAM + '?bbox=' + drawn.box;
        const response = await fetch(url, {cache: 'no-store', headers: headers, signal: signal});
        if (!response.ok || response.body === null) throw new Error(url + ' answered ' + response.status);
        let reset = false;
        const parser = new EventStreamParser(function (type, data) {
            if (type === 'reset') {
                reset = true;
            } else if (type === 'message' || type === 'delete') {
                let value;
                try {
                    value = JSON.parse(data);
                } catch (error) {
                    return;  // an event this page cannot read is skipped; the stream goes on
                }
                apply(type, value);
            }
        });
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let opened = false;
        showState('live', notice);
        try {
            for (;;) {
                const chunk = await reader.read();
                if (chunk.done) return;
                if (!opened) {
                    opened = true;
                    onOpen();
                }
                parser.push(decoder.decode(chunk.value, {stream: true}));
                if (parser.lastId !== null) position = parser.lastId;
                if (reset) throw new Reset('the server cannot resume from ' + position);
            }
        } finally {
            reader.cancel().catch(function () {});
        }
    }

    // Waits `ms`, or less if `signal` aborts.
    function pause(ms, signal) {
        return new Promise(function (resolve) {
            const timer = setTimeout(resolve, ms);
            signal.addEventListener('abort', function () { clearTimeout(timer); resolve(); }, {once: true});
        });
    }

    // Reads the view, then follows its stream for as long as the page is open. A new view (or a chatts view grown
    // too large) stops both and reads again at once. A stream that drops is followed again from the last event's
    // id after a capped, jittered back-off (between half and all of a delay that doubles from 1 s to 30 s, and
    // starts again from 1 s once a stream has sent something); a reset reads the view again first, at once the
    // first time, after the back-off if it repeats.
    async function run() {
        const addressed = viewInAddress();
        if (addressed) map.setView(addressed.center, addressed.zoom);
        else map.setView([20, 0], 2);
        let fit = addressed === null;
        let delay = FIRST_RETRY_MS;
        let needView = true;
        let resetsInARow = 0;
        for (;;) {
            const signal = cycle.signal;
            let wait = true;
            try {
                if (needView) {
                    wanted = viewNow();
                    await load(wanted, signal, fit);
                    fit = false;
                    needView = false;
                }
                await follow(signal, function () { delay = FIRST_RETRY_MS; resetsInARow = 0; });
            } catch (error) {
                if (error instanceof Reset) {
                    needView = true;
                    resetsInARow += 1;
                    wait = resetsInARow > 1;
                }
            }
            if (signal.aborted) {
                cycle = new AbortController();
                needView = true;
                continue;
            }
            // Without a position the stream can only start from "now": read the view again so that nothing
            // posted while the stream was down is missed.
            if (position === null) needView = true;
            if (wait) {
                const ms = delay / 2 + Math.random() * delay / 2;
                delay = Math.min(RETRY_CAP_MS, delay * 2);
                showState('retrying', 'live updates paused; retrying in ' + Math.ceil(ms / 1000) + ' s');
                await pause(ms, signal);
                if (signal.aborted) {
                    cycle = new AbortController();
                    needView = true;
                }
            }
        }
    }

    run();
})();
