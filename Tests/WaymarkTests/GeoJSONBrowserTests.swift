import Foundation
import Testing

/// Waymark's GeoJSON in a web map (issue 29, item 1: "a browser test loads the output in a map
/// library page"): Debian's Leaflet (libjs-leaflet, installed by scripts/test.sh, read from
/// /usr/share/javascript, nothing fetched) in headless chromium draws every variant of render's
/// output. Leaflet must make a layer of every feature, hold every position, fit the map to the
/// collection's box, and take each line's simplestyle colour, with no script error.
/// Debian's Leaflet (libjs-leaflet).
private let debianLeaflet = "/usr/share/javascript/leaflet/leaflet.js"

@Suite(
    .enabled(
        if: which("chromium") != nil && FileManager.default.fileExists(atPath: debianLeaflet)
            && FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "needs chromium and libjs-leaflet (scripts/test.sh installs both)"),
    .timeLimit(.minutes(45)))
struct GeoJSONBrowserTests {
    static let page = """
        <!doctype html>
        <html><head><meta charset="utf-8">
        <link rel="stylesheet" href="file:///usr/share/javascript/leaflet/leaflet.css">
        <script src="file:///usr/share/javascript/leaflet/leaflet.js"></script>
        <script src="data.js"></script>
        </head><body>
        <div id="map" style="width:800px;height:600px"></div><pre id="result"></pre>
        <script>
        const errors = [];
        window.onerror = (message) => { errors.push(String(message)); };
        let result = {};
        try {
          const map = L.map('map', {zoomAnimation: false, fadeAnimation: false, markerZoomAnimation: false});
          const strokes = [];
          const layer = L.geoJSON(data, {
            style: (f) => {
              const stroke = f.properties && f.properties.stroke;
              if (stroke) strokes.push(stroke);
              return {color: stroke || '#3388ff', weight: (f.properties && f.properties['stroke-width']) || 3};
            },
            pointToLayer: (f, latlng) => L.circleMarker(latlng, {radius: 3}),
          }).addTo(map);
          const b = layer.getBounds();
          map.fitBounds(b);
          let positions = 0;
          layer.eachLayer((l) => { positions += l.getLatLngs ? l.getLatLngs().flat(3).length : 1; });
          result = {
            layers: layer.getLayers().length, positions, strokes, zoom: map.getZoom(),
            bounds: [b.getWest(), b.getSouth(), b.getEast(), b.getNorth()],
            drawn: document.querySelectorAll('path.leaflet-interactive').length,
          };
        } catch (e) { errors.push(String(e)); }
        result.errors = errors;
        document.getElementById('result').textContent = JSON.stringify(result);
        </script></body></html>
        """

    static let variants: [[String]] = [
        [], ["--precision", "5", "--2d", "--simplify", "3", "--summary-properties", "--simplestyle"],
        ["--geojson-points"], ["--only", "tracks", "--no-coordinate-properties"],
    ]

    @Test(arguments: variants)
    func leafletDrawsEveryFeature(_ options: [String]) async throws {
        for trace in ["traces/city-walk.gpx", "traces/drive-tunnel.gpx", Paths.fixture("gpx/segments.gpx")] {
            let directory = temporaryPath("-leaflet")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let path = trace.hasPrefix("/") ? trace : Paths.root.appendingPathComponent(trace).path
            let geojson = directory + "/out.geojson"
            let r = try run(Paths.waymark.path, ["render", path, "-f", "geojson", "-o", geojson] + options)
            try #require(r.status == 0, "\(r.stderr)")
            let data = try Data(contentsOf: URL(fileURLWithPath: geojson))
            try ("var data = " + String(decoding: data, as: UTF8.self) + ";\n").write(
                toFile: directory + "/data.js", atomically: true, encoding: .utf8)
            try Self.page.write(toFile: directory + "/page.html", atomically: true, encoding: .utf8)
            let dom = try await HTMLBrowserTests.chromium(
                directory, ["--allow-file-access-from-files", "--dump-dom"], "file://\(directory)/page.html")
            #expect(dom.status == 0, "\(dom.stderr)")
            let text = dom.stdoutText
            guard let start = text.range(of: "<pre id=\"result\">"),
                let end = text.range(of: "</pre>", range: start.upperBound..<text.endIndex)
            else {
                Issue.record("\(trace) \(options): no result in the page: \(text.suffix(400))")
                continue
            }
            let json = String(text[start.upperBound..<end.lowerBound]).replacingOccurrences(of: "&amp;", with: "&")
            let drawn = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            let context = "\(trace) \(options)"
            #expect((drawn["errors"] as? [Any])?.isEmpty == true, "\(context): \(drawn)")

            // What the file holds, read here: features, positions, box, colours.
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let features = object["features"] as? [[String: Any]] ?? []
            var positions = 0
            var strokes: [String] = []
            for feature in features {
                let geometry = feature["geometry"] as? [String: Any]
                switch geometry?["type"] as? String {
                case "Point": positions += 1
                case "LineString": positions += (geometry?["coordinates"] as? [Any])?.count ?? 0
                case "MultiLineString":
                    positions += (geometry?["coordinates"] as? [[Any]])?.reduce(0) { $0 + $1.count } ?? 0
                default: break
                }
                if let stroke = (feature["properties"] as? [String: Any])?["stroke"] as? String {
                    strokes.append(stroke)
                }
            }
            #expect(drawn["layers"] as? Int == features.count, "\(context): \(drawn)")
            #expect(drawn["drawn"] as? Int == features.count, "\(context): every feature is drawn: \(drawn)")
            #expect(drawn["positions"] as? Int == positions, "\(context): \(drawn)")
            #expect(drawn["strokes"] as? [String] == strokes, "\(context): \(drawn)")
            if options.contains("--simplestyle") { #expect(!strokes.isEmpty, "\(context)") }
            let box = try #require(object["bbox"] as? [Double])
            let bounds = try #require(drawn["bounds"] as? [Double])
            for (leaflet, ours) in zip(bounds, box) {
                #expect(abs(leaflet - ours) < 1e-9, "\(context): Leaflet's bounds \(bounds), the file's bbox \(box)")
            }
            let zoom = drawn["zoom"] as? Double ?? (drawn["zoom"] as? Int).map(Double.init) ?? -1
            #expect(zoom >= 10, "\(context): the map fits a city trace at street level: zoom \(zoom)")
        }
    }
}
