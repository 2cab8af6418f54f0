extension MapPage {
    /// `GET /map/map.js`: the page's script. See the comment at its top.
    static let scriptText = #"""
        // chatterd's live map (GET /map). Every chatt with geodata is a marker; new ones are added as they are
        // posted. Runs under a strict Content-Security-Policy: no inline code, no eval, and text from chatts only
        // ever through textContent (a popup is a DOM node, never HTML).
        //
        // Rows are docs/API.md's /getmaps rows, [name, message, id, timestamp, geodata], geodata being null or a
        // JSON string "[lat, lon, facing, speed]". The live part follows the stream contract: GET /getmaps gives
        // the rows and, in Feed-Position, the position of the feed they show; GET /getmaps/stream with that
        // position as Last-Event-ID sends exactly the chatts after it as server-sent events ("id: <position>",
        // "data: <row>"), heartbeats as comment lines, and "event: reset" when the position is no longer one it
        // can resume from (the map then reads /getmaps again). fetch, not EventSource: EventSource cannot send
        // Last-Event-ID on its first request. Test hooks, readable without weakening the policy: the body's
        // data-markers (markers shown), data-feed (loading, live, retrying) and data-tiles (loaded, unavailable).
        'use strict';

        (function () {
            const FEED = '/getmaps';
            const STREAM = '/getmaps/stream';
            const FIRST_RETRY_MS = 1000;
            const RETRY_CAP_MS = 30000;

            const body = document.body;
            const status = document.getElementById('status');

            const map = L.map('map', {worldCopyJump: true}).setView([20, 0], 2);
            // Without the network (or OpenStreetMap) tiles fail one by one; the markers stay on the plain background.
            L.tileLayer('https://tile.openstreetmap.org/{z}/{x}/{y}.png', {
                maxZoom: 19,
                attribution: '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors',
            }).on('tileload', function () {
                body.dataset.tiles = 'loaded';
            }).on('tileerror', function () {
                if (body.dataset.tiles !== 'loaded') body.dataset.tiles = 'unavailable';
            }).addTo(map);

            const markers = L.featureGroup().addTo(map);
            const shown = new Map();  // the id of each chatt that has a marker, to its marker
            let fitted = false;       // the view was fitted to the markers once; after that it is the user's
            // The feed position the map shows: /getmaps's Feed-Position, then each event's id as it is read (so a
            // stream that breaks mid-way is resumed from its last event, not from where it started); null while
            // unknown.
            let position = null;

            function showState(state, text) {
                body.dataset.feed = state;
                status.textContent = text;
            }

            // Where a row is, or null: no geodata, or geodata that is not [lat, lon, facing, speed] in range.
            function placeOf(row) {
                if (!Array.isArray(row) || row.length !== 5 || typeof row[4] !== 'string') return null;
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
                return {lat: lat, lon: lon, facing: String(facing), speed: String(speed)};
            }

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
            function popupOf(row, place) {
                const box = document.createElement('div');
                box.className = 'chatt';
                append(box, 'div', 'chatt-name', String(row[0]));
                append(box, 'div', 'chatt-message', String(row[1]));
                const time = append(box, 'time', 'chatt-time', localTime(String(row[3])));
                time.dateTime = String(row[3]);
                append(box, 'span', 'chatt-motion', 'facing ' + place.facing + ', speed ' + place.speed);
                return box;
            }

            // Adds a marker for the row unless it has no place or is shown already.
            function add(row) {
                const place = placeOf(row);
                if (place === null || typeof row[2] !== 'string' || shown.has(row[2])) return;
                // title and alt are set as properties by Leaflet: text, not HTML.
                const name = String(row[0]);
                const marker = L.marker([place.lat, place.lon], {title: name, alt: name});
                shown.set(row[2], marker.bindPopup(popupOf(row, place)).addTo(markers));
                body.dataset.markers = String(shown.size);
            }

            // Takes away the marker of a removed chatt (an "event: delete" names it), if it has one.
            function remove(id) {
                const marker = shown.get(id);
                if (marker === undefined) return;
                markers.removeLayer(marker);
                shown.delete(id);
                body.dataset.markers = String(shown.size);
            }

            // Reads the whole feed into the map and returns its position, or null from a server that does not say
            // it. Markers of chatts the feed no longer has (the store was edited) go: then the map is drawn
            // again; otherwise only the new chatts are added, so an open popup stays open.
            async function loadFeed() {
                const response = await fetch(FEED, {cache: 'no-store', headers: {'Accept': 'application/json'}});
                if (!response.ok) throw new Error(FEED + ' answered ' + response.status);
                const rows = await response.json();
                if (!Array.isArray(rows)) throw new Error(FEED + ' is not an array');
                const ids = new Set(rows.map(function (row) { return Array.isArray(row) ? row[2] : undefined; }));
                if (Array.from(shown.keys()).some(function (id) { return !ids.has(id); })) {
                    markers.clearLayers();
                    shown.clear();
                }
                rows.forEach(add);
                body.dataset.markers = String(shown.size);
                if (!fitted && shown.size > 0) {
                    map.fitBounds(markers.getBounds().pad(0.2), {maxZoom: 12});
                    fitted = true;
                }
                return response.headers.get('Feed-Position');
            }

            // An event stream (the HTML standard's "interpreting an event stream"), fed text as it arrives: lines
            // end with CRLF, LF or CR; "field: value" lines build an event and a blank line dispatches it; lines
            // starting with ":" are comments (heartbeats). onEvent(type, data) is called per event; lastId is the
            // id of the last event dispatched (an id line with no event still moves it, as the standard says).
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

            class Reset extends Error {}

            // Follows the stream from `position` (null: from now), adding each chatt and moving `position` to each
            // event's id; returns when the stream ends, throws Reset on a reset event, and throws on anything else
            // that stops it. `onOpen` is called once the server answers 200 and sends its first bytes.
            async function follow(onOpen) {
                const headers = {'Accept': 'text/event-stream'};
                if (position !== null) headers['Last-Event-ID'] = position;
                const controller = new AbortController();
                const response = await fetch(STREAM, {cache: 'no-store', headers: headers, signal: controller.signal});
                if (!response.ok || response.body === null) {
                    throw new Error(STREAM + ' answered ' + response.status);
                }
                let reset = false;
                const parser = new EventStreamParser(function (type, data) {
                    if (type === 'reset') {
                        reset = true;
                    } else if (type === 'message' || type === 'delete') {
                        let value;
                        try {
                            value = JSON.parse(data);
                        } catch (error) {
                            // An event this page cannot read is skipped; the stream goes on.
                            return;
                        }
                        if (type === 'message') add(value);
                        else if (typeof value === 'string') remove(value);
                    }
                });
                const reader = response.body.getReader();
                const decoder = new TextDecoder();
                let opened = false;
                showState('live', '');
                for (;;) {
                    const chunk = await reader.read();
                    if (chunk.done) break;
                    if (!opened) {
                        opened = true;
                        onOpen();
                    }
                    parser.push(decoder.decode(chunk.value, {stream: true}));
                    if (parser.lastId !== null) position = parser.lastId;
                    if (reset) {
                        controller.abort();
                        throw new Reset('the server cannot resume from ' + position);
                    }
                }
            }

            const sleep = function (ms) {
                return new Promise(function (resolve) { setTimeout(resolve, ms); });
            };

            // Reads the feed, then follows the stream for as long as the page is open. A stream that drops is
            // followed again from the last event's id after a capped, jittered back-off (between half and all of a
            // delay that doubles from 1 s to 30 s, and starts again from 1 s once a stream has sent something);
            // a reset reads the feed again first, at once the first time, after the back-off if it repeats.
            async function run() {
                let delay = FIRST_RETRY_MS;
                let needFeed = true;
                let resetsInARow = 0;
                for (;;) {
                    let wait = true;
                    try {
                        if (needFeed) {
                            position = await loadFeed();
                            needFeed = false;
                        }
                        await follow(function () { delay = FIRST_RETRY_MS; resetsInARow = 0; });
                    } catch (error) {
                        if (error instanceof Reset) {
                            needFeed = true;
                            resetsInARow += 1;
                            wait = resetsInARow > 1;
                        }
                    }
                    // Without a position the stream can only start from "now": read the feed again so that nothing
                    // posted while the stream was down is missed.
                    if (position === null) needFeed = true;
                    if (wait) {
                        const ms = delay / 2 + Math.random() * delay / 2;
                        delay = Math.min(RETRY_CAP_MS, delay * 2);
                        showState('retrying', 'live updates paused; retrying in ' + Math.ceil(ms / 1000) + ' s');
                        await sleep(ms);
                    }
                }
            }

            run();
        })();

        """#
}
