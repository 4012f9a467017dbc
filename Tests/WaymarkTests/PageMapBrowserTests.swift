import Foundation
import Testing

@testable import Waymark

/// Issue 29, item 4, in a real browser: headless chromium loads a page in a frame (a harness
/// page beside it, read with --allow-file-access-from-files), zooms it with the wheel, pans it
/// with a drag, hovers a point, and reports what the page then shows: the tiles it asked for and
/// where it put them, the marks' sizes, the names' boxes as the browser laid them out.
@Suite(
    .enabled(
        if: which("chromium") != nil && FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "chromium is not installed (scripts/test.sh installs it: apt-get install chromium)"),
    .timeLimit(.minutes(45)))
struct PageMapBrowserTests {
    static let harness = #"""
        <!DOCTYPE html><html><body><iframe id="f" width="1060" height="1500"></iframe><pre id="out">waiting</pre>
        <script>
        const f = document.getElementById("f");
        f.addEventListener("load", () => {
          const d = f.contentDocument, w = f.contentWindow, out = {};
          const fire = (el, type, x, y, extra) => el.dispatchEvent(new w.MouseEvent(type,
            Object.assign({ clientX: x, clientY: y, bubbles: true, cancelable: true }, extra || {})));
          const box = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
          const snapshot = () => {
            const tiles = [...d.querySelectorAll("#tiles image")].map((im) => [im.dataset.tile, im.getAttribute("href"),
              +im.getAttribute("x"), +im.getAttribute("y"), +im.getAttribute("width")]);
            return { transform: d.getElementById("map-view").getAttribute("transform"), tiles,
              startR: +d.getElementById("start").getAttribute("r"),
              mapWidth: d.getElementById("map-svg").getBoundingClientRect().width,
              scale: d.querySelector("#scale-bar text:last-of-type").textContent,
              scaleWidth: +d.querySelector("#scale-bar rect").getAttribute("width") };
          };
          try {
            const data = JSON.parse(d.getElementById("waymark-data").textContent);
            const P = data.points, ov = d.getElementById("map-overlay");
            const client = (vx, vy) => { const r = ov.getBoundingClientRect(); return [r.left + vx / 1000 * r.width, r.top + vy / 760 * r.height]; };
            out.labels = [...d.querySelectorAll("#waypoints text")].map((t) => [t.textContent, box(t)]);
            out.marks = ["start", "end"].map((id) => box(d.getElementById(id)));
            out.before = snapshot();
            // Zoom in about the first point: six wheel steps.
            const [sx, sy] = client(P.x[0], P.y[0]);
            for (let n = 0; n < 6; n++) ov.dispatchEvent(new w.WheelEvent("wheel", { clientX: sx, clientY: sy, deltaY: -100, bubbles: true, cancelable: true }));
            out.zoomed = snapshot();
            // Hover a point where it now is on the screen.
            const i = Math.floor(P.x.length / 3);
            const m = /translate\(([-\d.e]+) ([-\d.e]+)\) scale\(([-\d.e]+)\)/.exec(out.zoomed.transform);
            const k = +m[3], tx = +m[1], ty = +m[2];
            const [hx, hy] = client(P.x[i] * k + tx, P.y[i] * k + ty);
            fire(ov, "mousemove", hx, hy);
            out.hover = [i, d.getElementById("tooltip").textContent.split("\n")[0]];
            // Drag 100 pixels right and 50 down.
            fire(ov, "pointerdown", sx, sy, { button: 0 });
            fire(ov, "mousemove", sx + 50, sy + 25, { buttons: 1 });
            fire(ov, "mousemove", sx + 100, sy + 50, { buttons: 1 });
            fire(w, "pointerup", sx + 100, sy + 50);
            out.dragged = snapshot();
            out.css = ov.getBoundingClientRect().width;
            d.getElementById("zoom-reset").click();
            out.reset = snapshot();
          } catch (e) {
            out.error = String(e) + " " + e.stack;
          }
          document.getElementById("out").textContent = JSON.stringify(out);
        });
        f.src = location.hash.slice(1);
        </script></body></html>
        """#

    static func interact(with page: String, in directory: String) async throws -> [String: Any] {
        let harness = directory + "/map-harness.html"
        try Self.harness.write(toFile: harness, atomically: true, encoding: .utf8)
        let dom = try await HTMLBrowserTests.chromium(
            directory, ["--allow-file-access-from-files", "--window-size=1100,1600", "--dump-dom"],
            "file://\(harness)#\((page as NSString).lastPathComponent)")
        #expect(dom.status == 0, "\(dom.stderr)")
        #expect(!dom.stderr.contains("Uncaught"), "\(dom.stderr)")
        let text = try #require(dom.stdoutText.components(separatedBy: "<pre id=\"out\">").dropFirst().first)
        let json = String(text.prefix { $0 != "<" })
            .replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">")
        let found = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(found["error"] == nil, "\(found["error"] ?? "")")
        return found
    }

    /// A walk north with a waypoint on its start, one on its end and one beside its middle.
    static func walkWithWaypoints() -> String {
        var gpx = #"<?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">"#
        gpx += #"<wpt lat="48.137" lon="11.575"><name>Start of the walk</name></wpt>"#
        gpx += #"<wpt lat="48.13788" lon="11.575"><name>Fountain</name></wpt>"#
        gpx += #"<wpt lat="48.13922" lon="11.575"><name>Finish</name></wpt><trk><name>Walk</name><trkseg>"#
        for i in 0..<50 {
            let t = ValueFormatting.iso8601(Date(timeIntervalSince1970: 1_719_792_000 + Double(i) * 4))
            gpx += "<trkpt lat=\"\(48.137 + Double(i) * 0.0000453)\" lon=\"11.575\"><time>\(t)</time></trkpt>"
        }
        return gpx + "</trkseg></trk></gpx>"
    }

    /// The tile of a point at zoom `z` by the slippy-map formulas (OpenStreetMap's wiki), and
    /// where in it the point lies (0…1 across and down).
    static func slippy(latitude: Double, longitude: Double, z: Int) -> (x: Int, y: Int, fx: Double, fy: Double) {
        let n = pow(2, Double(z))
        let x = (longitude + 180) / 360 * n
        let phi = latitude * .pi / 180
        let y = (1 - log(tan(phi) + 1 / cos(phi)) / .pi) / 2 * n
        return (Int(x.rounded(.down)), Int(y.rounded(.down)), x - x.rounded(.down), y - y.rounded(.down))
    }

    /// The tiles asked for lie where the slippy-map formulas put the trace: the tile of the first
    /// point holds it at its place, before and after zooming and panning; the zoom asked for
    /// shows tiles at about their own size; the tiles cover the panel; and the credit is shown.
    @Test(arguments: ["a short walk", "traces/city-walk.gpx"])
    func tilesLieUnderTheTraceAtEveryZoom(_ trace: String) async throws {
        let directory = temporaryPath("-tiles")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Every tile is this one picture: its address's query names the tile.
        try
            ##"<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256"><rect width="256" height="256" fill="#e8e0c8" stroke="#8c959f"/></svg>"##
            .write(toFile: directory + "/tile.svg", atomically: true, encoding: .utf8)
        var input = directory + "/walk.gpx"
        if trace.hasPrefix("traces/") {
            input = Paths.root.appendingPathComponent(trace).path
        } else {
            try Self.walkWithWaypoints().write(toFile: input, atomically: true, encoding: .utf8)
        }
        let page = directory + "/walk.html"
        let made = try run(
            Paths.waymark.path,
            [
                "render", input, "-o", page, "--tiles", "file://\(directory)/tile.svg?{z}/{x}/{y}",
                "--tiles-attribution", "Test tiles",
            ])
        #expect(made.status == 0, "\(made.stderr)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains(">Test tiles</div>"))
        let points = try #require(try HTMLPageTests.island(html)["points"] as? [String: [Any]])
        let lat = try #require(points["lat"]?[0] as? Double)
        let lon = try #require(points["lon"]?[0] as? Double)
        let x0 = try #require(points["x"]?[0] as? Double)
        let y0 = try #require(points["y"]?[0] as? Double)

        let found = try await Self.interact(with: page, in: directory)
        let css = try #require(found["css"] as? Double)
        var zooms: [Int] = []
        for key in ["before", "zoomed", "dragged", "reset"] {
            let view = try #require(found[key] as? [String: Any], "\(key)")
            let tiles = try #require(view["tiles"] as? [[Any]], "\(key)")
            #expect(!tiles.isEmpty, "\(key): no tiles")
            let transform = try #require(view["transform"] as? String)
            let numbers = transform.split(whereSeparator: { !"-0123456789.e".contains($0) }).compactMap { Double($0) }
            #expect(numbers.count == 3, "\(transform)")
            let (tx, ty, k) = (numbers[0], numbers[1], numbers[2])
            // Every tile of one zoom, each as wide as the others, about 256 screen pixels.
            let z = try #require(Int((tiles[0][0] as? String ?? "").split(separator: "/")[0]))
            zooms.append(z)
            let side = try #require(tiles[0][4] as? Double) - 0.25
            let screen = side * css / 1000
            // (Beyond the highest zoom, 19 by default, tiles are drawn larger.)
            #expect(
                screen > 256 / 2.0.squareRoot() - 1 && (z == 19 || screen < 256 * 2.0.squareRoot() + 1),
                "\(key): \(screen) px")
            // The first point's tile holds it where the formulas say (while the point is in the
            // panel: a drag may take it out).
            let px = x0 * k + tx
            let py = y0 * k + ty
            let s = Self.slippy(latitude: lat, longitude: lon, z: z)
            if px > 20 && px < 980 && py > 50 && py < 686 {
                let tile = try #require(
                    tiles.first { $0[0] as? String == "\(z)/\(s.x)/\(s.y)" }, "\(key): no \(z)/\(s.x)/\(s.y)")
                #expect((tile[1] as? String)?.hasSuffix("tile.svg?\(z)/\(s.x)/\(s.y)") == true)
                let tileX = try #require(tile[2] as? Double)
                let tileY = try #require(tile[3] as? Double)
                #expect(abs(tileX + s.fx * side - px) < 0.5 && abs(tileY + s.fy * side - py) < 0.5, "\(key): \(tile)")
            } else {
                #expect(key == "dragged", "the point is in the panel before a drag: \(px), \(py)")
            }
            // The panel is covered.
            let xs = tiles.compactMap { $0[2] as? Double }
            let ys = tiles.compactMap { $0[3] as? Double }
            #expect(xs.min()! <= 20 && xs.max()! + side >= 980 && ys.min()! <= 50 && ys.max()! + side >= 686, "\(key)")
        }
        // The zoom whose tiles are nearest their own size: 2^z tiles of 256 screen pixels span the
        // world as wide as the map draws it.
        let scale = try #require((try HTMLPageTests.island(html)["map"] as? [String: Any])?["scale"] as? Double)
        let expected = [1, pow(1.25, 6), pow(1.25, 6), 1].map { k in
            min(19, Int(log2(2 * Double.pi * 6_378_137 * scale * k * css / 1000 / 256).rounded()))
        }
        #expect(zooms == expected)
        #expect(zooms[1] > zooms[0])
    }

    /// Zoom and pan without tiles: the marks keep their size on the screen, the scale bar says
    /// the new scale, hovering finds the point under the mouse, a drag pans and "whole trace"
    /// goes back.
    @Test func theVectorMapZoomsAndPans() async throws {
        let directory = temporaryPath("-zoom")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = directory + "/walk.gpx"
        try Self.walkWithWaypoints().write(toFile: input, atomically: true, encoding: .utf8)
        let page = directory + "/walk.html"
        #expect(try run(Paths.waymark.path, ["render", input, "-o", page]).status == 0)
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(!html.contains("\"tiles\":"))
        let found = try await Self.interact(with: page, in: directory)
        let before = try #require(found["before"] as? [String: Any])
        let zoomed = try #require(found["zoomed"] as? [String: Any])
        let dragged = try #require(found["dragged"] as? [String: Any])
        let reset = try #require(found["reset"] as? [String: Any])
        #expect((before["tiles"] as? [Any])?.isEmpty == true, "no tiles were asked for")
        func view(_ v: [String: Any]) -> [Double] {
            (v["transform"] as? String ?? "").split(whereSeparator: { !"-0123456789.e".contains($0) })
                .compactMap { Double($0) }
        }
        let k = view(zoomed)[2]
        #expect(abs(k - pow(1.25, 6)) < 1e-6, "\(view(zoomed))")
        #expect(abs((zoomed["startR"] as? Double ?? 0) * k - 7) < 1e-6, "the start dot keeps its size")
        // The scale bar: a round distance whose length in pixels is its metres over the new
        // metres per pixel.
        let mpp = try #require((try HTMLPageTests.island(html)["map"] as? [String: Any])?["mpp"] as? Double) / k
        let label = try #require(zoomed["scale"] as? String)
        let metres = try #require(Double(label.split(separator: " ")[0])) * (label.hasSuffix(" km") ? 1000 : 1)
        #expect(abs((zoomed["scaleWidth"] as? Double ?? 0) - metres / mpp) < 0.01, "\(label)")
        #expect(label != before["scale"] as? String, "the scale changed: \(label)")
        // The hovered point is the one under the mouse.
        let hover = try #require(found["hover"] as? [Any])
        let points = try #require(try HTMLPageTests.island(html)["points"] as? [String: [Any]])
        let i = try #require(hover[0] as? Int)
        let t = try #require(points["t"]?[i] as? Double)
        #expect(hover[1] as? String == "time       \(DisplayTimeZone.utc.text(t))")
        // The drag moved the view by 100 by 50 screen pixels, in viewBox units.
        let css = try #require(found["css"] as? Double)
        let shift = (view(dragged)[0] - view(zoomed)[0], view(dragged)[1] - view(zoomed)[1])
        #expect(abs(shift.0 - 100 * 1000 / css) < 0.01 && abs(shift.1 - 50 * 1000 / css) < 0.01, "\(shift)")
        #expect(view(reset) == [0, 0, 1])
        // The names, as the browser laid them out, cover neither the start nor the end.
        let labels = try #require(found["labels"] as? [[Any]])
        let marks = try #require(found["marks"] as? [[Double]])
        #expect(labels.count == 3)
        for label in labels {
            let b = try #require(label[1] as? [Double])
            for m in marks {
                let overlaps = min(b[2], m[2]) > max(b[0], m[0]) && min(b[3], m[3]) > max(b[1], m[1])
                #expect(!overlaps, "\(label[0]) covers a mark: \(b) and \(m)")
            }
        }
    }
}
