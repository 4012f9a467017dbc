#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The parts every Waymark page shares: the document's head with its style sheet, escaping,
/// the data island the script reads, and the script itself.
///
/// A page is one file with nothing fetched: no network, no fonts, no CDN. Its drawings are inline
/// SVG; its data is one JSON object in `<script type="application/json" id="waymark-data">`; its
/// behaviour (hover, click, the axis switch, `#point=N` and `#time=ISO` links) is ``script``.
enum HTMLPage {
    /// Starts the document: doctype, head, style sheet, the title as a heading and `subtitle`
    /// under it.
    static func begin(title: String, subtitle: String, to out: ByteStore) {
        out.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        out.append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        out.append("<meta name=\"generator\" content=\"Waymark\">\n<title>")
        appendText(title, to: out)
        out.append("</title>\n<style>\n")
        out.append(css)
        out.append("</style>\n</head>\n<body>\n<header><h1>")
        appendText(title, to: out)
        out.append("</h1>\n<p class=\"subtitle\">")
        appendText(subtitle, to: out)
        out.append("</p></header>\n")
    }

    /// Ends the document: the data island, the script, the closing tags.
    static func end(data: ByteStore, to out: ByteStore) {
        out.append("<div id=\"tooltip\" role=\"tooltip\" hidden></div>\n")
        out.append("<script type=\"application/json\" id=\"waymark-data\">")
        out.append(data.string)
        out.append("</script>\n<script>\n")
        out.append(script)
        out.append("</script>\n</body>\n</html>\n")
    }

    /// Text content, escaped for HTML (the same rules as XML text).
    static func appendText(_ text: String, to out: ByteStore) {
        XMLEscaping.appendEscaped(text, attribute: false, html: true, to: out)
    }

    /// A JSON string literal that is safe inside `<script>` (``JSONEscaping`` for a script).
    static func appendJSONString(_ text: String, to out: ByteStore) {
        JSONEscaping.appendString(text, forScript: true, to: out)
    }

    /// A JSON number with at most `decimals` decimals, or `null` for NaN and infinities.
    static func appendJSONNumber(_ value: Double, decimals: Int, to out: ByteStore) {
        if value.isFinite {
            ValueFormatting.appendFixed(value, decimals: decimals, to: out)
        } else {
            out.append("null")
        }
    }

    /// A JSON number that reads back as the same `Double` (shortest round-trip digits), or `null`.
    static func appendJSONExact(_ value: Double, to out: ByteStore) {
        out.append(value.isFinite ? "\(value)" : "null")
    }

    /// `"key":[v,v,…]`, each value with at most `decimals` decimals (`null` for NaN).
    static func appendJSONArray(_ key: String, _ values: [Double], decimals: Int, to out: ByteStore) {
        appendJSONString(key, to: out)
        out.append(":[")
        for (i, v) in values.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            appendJSONNumber(v, decimals: decimals, to: out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// The zoom buttons above a map.
    static func appendMapControls(to out: ByteStore) {
        out.append(
            "<div class=\"map-controls\"><button type=\"button\" id=\"zoom-in\" title=\"Zoom in\">+</button><button type=\"button\" id=\"zoom-out\" title=\"Zoom out\">−</button><button type=\"button\" id=\"zoom-reset\" title=\"Show the whole trace\">whole trace</button></div>\n"
        )
    }

    /// Opens the layer drawn over a map (``SVGWriter``'s, same viewBox): clipped to the map's
    /// panel, its content in `overlay-view`, which the script zooms and pans with the map.
    static func beginOverlay(hidden: Bool, to out: ByteStore) {
        out.append(
            "<svg id=\"map-overlay\" class=\"overlay\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(SVGWriter.width) \(SVGWriter.height)\"\(hidden ? " aria-hidden=\"true\"" : "")>\n"
        )
        out.append(
            "<clipPath id=\"overlay-clip\"><rect x=\"\(Int(SVGWriter.panelX))\" y=\"\(Int(SVGWriter.panelY))\" width=\"\(Int(SVGWriter.panelWidth))\" height=\"\(Int(SVGWriter.panelHeight))\"/></clipPath>\n<g clip-path=\"url(#overlay-clip)\"><g id=\"overlay-view\">\n"
        )
    }

    static func endOverlay(to out: ByteStore) {
        out.append("</g></g>\n</svg>\n")
    }

    /// Lines through `pixels`, a new one where `segments` changes or a pixel is not finite;
    /// simplified with Douglas–Peucker to half a pixel.
    static func appendPolylines(_ pixels: [(x: Double, y: Double)], segments: [Int], to out: ByteStore) {
        var run: [(x: Double, y: Double)] = []
        func flush() {
            defer { run.removeAll(keepingCapacity: true) }
            guard run.count > 1 else { return }
            out.append("<polyline points=\"")
            for (n, k) in SVGWriter.simplify(run, tolerance: SVGWriter.tolerance).enumerated() {
                if n > 0 { out.append(UInt8(ascii: " ")) }
                SVGWriter.appendNumber(run[k].x, to: out)
                out.append(UInt8(ascii: ","))
                SVGWriter.appendNumber(run[k].y, to: out)
            }
            out.append("\"/>\n")
        }
        for i in pixels.indices {
            if i > 0 && segments[i] != segments[i - 1] { flush() }
            guard pixels[i].x.isFinite && pixels[i].y.isFinite else {
                flush()
                continue
            }
            run.append(pixels[i])
        }
        flush()
    }

    /// The data island's `charts` entries.
    static func appendCharts(
        _ charts: [(id: String, axis: HTMLChart.Axis, range: (d0: Double, d1: Double))], to data: ByteStore
    ) {
        for (k, chart) in charts.enumerated() {
            if k > 0 { data.append(",") }
            data.append("{\"id\":\"\(chart.id)\",\"axis\":\"\(chart.axis.rawValue)\",\"d0\":")
            appendJSONNumber(chart.range.d0, decimals: 3, to: data)
            data.append(",\"d1\":")
            appendJSONNumber(chart.range.d1, decimals: 3, to: data)
            data.append(",\"p0\":\(Int(HTMLChart.left)),\"p1\":\(Int(HTMLChart.right))}")
        }
    }

    /// The data island's `units` and `zone`: how the script writes quantities and times.
    /// `zone.offsets` are `[from, seconds east of UTC]` pairs over the trace's times.
    static func appendDisplay(units: DisplayUnits, zone: DisplayTimeZone, times: [Double], to data: ByteStore) {
        data.append(",\"units\":{\"dist\":")
        appendJSONNumber(units.longDistance.metres, decimals: 3, to: data)
        data.append(",\"distUnit\":\"\(units.longDistance.symbol)\",\"short\":")
        appendJSONNumber(units.shortDistance.metres, decimals: 4, to: data)
        data.append(",\"shortUnit\":\"\(units.shortDistance.symbol)\",\"speed\":")
        appendJSONExact(units.speed.metresPerSecond, to: data)
        data.append(",\"speedUnit\":\"\(units.speed.symbol)\",\"temp\":")
        appendJSONString(units.temperatureSymbol, to: data)
        data.append(",\"name\":\"\(units.rawValue)\"},\"zone\":{\"name\":")
        appendJSONString(zone.name, to: data)
        data.append(",\"utc\":\(zone.isUTC),\"offsets\":[")
        let finite = times.filter(\.isFinite)
        let offsets = zone.offsets(from: finite.min() ?? 0, to: finite.max() ?? 0)
        for (k, o) in offsets.enumerated() {
            if k > 0 { data.append(",") }
            data.append("[")
            appendJSONNumber(o.from, decimals: 3, to: data)
            data.append(",\(o.offset)]")
        }
        data.append("]}")
    }

    /// The data island's `map`: how the map's pixels lie on the projection's plane, for zooming,
    /// the scale bar and the tiles; and `tiles` when there is a base map.
    static func appendMap(_ map: SVGWriter, tiles: MapTiles?, to data: ByteStore) {
        guard let mapping = map.mapping else { return }
        let p = mapping.projection
        let plane = p.planeToPixel
        data.append(",\"map\":{\"kind\":\"\(p.kind == .webMercator ? "mercator" : "local")\",\"scale\":")
        appendJSONExact(p.scale, to: data)
        data.append(",\"cx\":")
        appendJSONNumber(plane.centreX, decimals: 4, to: data)
        data.append(",\"cy\":")
        appendJSONNumber(plane.centreY, decimals: 4, to: data)
        data.append(",\"ox\":")
        appendJSONNumber(plane.offsetX, decimals: 4, to: data)
        data.append(",\"oy\":")
        appendJSONNumber(plane.offsetY, decimals: 4, to: data)
        data.append(",\"mpp\":")
        appendJSONExact(map.scaleMetresPerPixel ?? .nan, to: data)
        data.append(
            ",\"panel\":[\(Int(SVGWriter.panelX)),\(Int(SVGWriter.panelY)),\(Int(SVGWriter.panelWidth)),\(Int(SVGWriter.panelHeight))]}"
        )
        if let tiles {
            data.append(",\"tiles\":{\"template\":")
            appendJSONString(tiles.template, to: data)
            data.append(",\"maxZoom\":\(tiles.maxZoom)}")
        }
    }

    /// Which points have details: "every point", or "5000 of its 1052547 points, evenly spread".
    static func sampling(kept: Int, of total: Int) -> String {
        kept >= total ? "every point" : "\(kept) of its \(total) points, evenly spread"
    }

    static let css = """
        :root { color-scheme: light; --ink: #24292f; --muted: #57606a; --line: #d0d7de; --panel: #f6f8fa; }
        * { box-sizing: border-box; }
        body { margin: 0 auto; max-width: 1060px; padding: 16px 24px 40px; color: var(--ink);
          font: 14px/1.45 "DejaVu Sans", Arial, sans-serif; background: #fff; }
        header h1 { font-size: 20px; margin: 4px 0 2px; overflow-wrap: anywhere; }
        .subtitle { color: var(--muted); margin: 0 0 12px; }
        h2 { font-size: 16px; margin: 22px 0 8px; }
        .map { position: relative; width: 100%; max-width: 1000px; }
        .map svg { display: block; width: 100%; height: auto; }
        .map svg.overlay { position: absolute; left: 0; top: 0; height: 100%; cursor: crosshair; touch-action: none; }
        #map-view polyline, #overlay-view polyline, #overlay-view line { vector-effect: non-scaling-stroke; }
        .map .attribution { position: absolute; right: 2%; bottom: 9.8%; background: rgba(255,255,255,0.85);
          color: var(--ink); font-size: 11px; padding: 1px 6px; pointer-events: none; }
        .map-controls { margin: 0 0 6px; }
        .map-controls button { font: inherit; min-width: 30px; margin-right: 4px; padding: 1px 8px; cursor: pointer;
          border: 1px solid var(--line); border-radius: 5px; background: #fff; color: var(--ink); }
        .chart svg, .timeline svg { display: block; width: 100%; height: auto; cursor: crosshair; }
        .axis-switch { margin: 4px 0 8px; color: var(--muted); }
        .axis-switch label { margin-right: 14px; cursor: pointer; }
        table.stats { border-collapse: collapse; }
        table.stats th { text-align: left; font-weight: normal; color: var(--muted); padding: 2px 16px 2px 0;
          vertical-align: top; }
        table.stats td { padding: 2px 0; }
        #details { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px;
          min-height: 44px; white-space: pre-wrap; font: 12px/1.5 "DejaVu Sans Mono", monospace;
          overflow-wrap: anywhere; }
        #details .hint { font-family: "DejaVu Sans", Arial, sans-serif; color: var(--muted); }
        #details .now { background: #fff8c5; }
        #tooltip { position: fixed; pointer-events: none; background: rgba(36,41,47,0.94); color: #fff;
          padding: 6px 9px; border-radius: 5px; font-size: 12px; line-height: 1.4; white-space: pre; z-index: 9; }
        .legend { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 8px 0; padding: 0; list-style: none; }
        .legend li { display: flex; align-items: center; gap: 6px; }
        .swatch { display: inline-block; width: 22px; height: 10px; border-radius: 2px; }
        .swatch.tick { width: 3px; height: 12px; margin: 0 10px; border-radius: 0; }
        .note { color: var(--muted); font-size: 12px; }
        """

    /// The page's behaviour. It reads the data island:
    /// - `points`: columns `x`, `y` (map pixels), `t` (seconds since 1970), `lat`, `lon`, `ele`,
    ///   `speed`, `dist`, and for a report `cat` (category index) and `why` (reason index);
    /// - `charts`: each with `id`, `axis` (`t` or `dist`), the data range `d0`–`d1` and the
    ///   pixel range `p0`–`p1` it spans;
    /// - `timeline` (a report): `id`, `t0`–`t1`, `p0`–`p1`;
    /// - `events` (a report): `[seconds, line]` pairs in time order; `categories`, `reasons`.
    static let script = #"""
        "use strict";
        (function () {
          const data = JSON.parse(document.getElementById("waymark-data").textContent);
          const P = data.points, n = P.x.length;
          const tip = document.getElementById("tooltip");
          const details = document.getElementById("details");
          const overlay = document.getElementById("map-overlay");
          const marker = document.getElementById("marker");
          const U = data.units || { dist: 1000, distUnit: "km", short: 1, shortUnit: "m", speed: 1 / 3.6,
            speedUnit: "km/h", temp: "°C" };
          const Z = data.zone || { utc: true, offsets: [] };
          const pad = (v) => (v < 10 ? "0" : "") + v;
          function offsetAt(t) {
            let o = Z.offsets.length ? Z.offsets[0][1] : 0;
            for (const [from, off] of Z.offsets) { if (t >= from) o = off; else break; }
            return o;
          }
          const offsetText = (o) => (o < 0 ? "-" : "+") + pad(Math.floor(Math.abs(o) / 3600)) + ":" +
            pad(Math.floor(Math.abs(o) / 60) % 60);
          // A time in the page's zone: "2024-05-01 10:03:20 +02:00", or "… UTC".
          const iso = (t) => { const o = Z.utc ? 0 : offsetAt(t), d = new Date((t + o) * 1000);
            return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) +
            "-" + pad(d.getUTCDate()) + " " + pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" +
            pad(d.getUTCSeconds()) + (Z.utc ? " UTC" : " " + offsetText(o)); };
          const num = (v, d) => (v === null || v === undefined ? null : Number(v).toFixed(d));
          const has = (column, i) => column && column[i] !== null && column[i] !== undefined;
          function describe(i) {
            const rows = [];
            if (P.t[i] !== null) rows.push("time       " + iso(P.t[i]));
            rows.push("position   " + num(P.lat[i], 6) + ", " + num(P.lon[i], 6));
            if (has(P.ele, i)) rows.push("elevation  " + num(P.ele[i] / U.short, 1) + " " + U.shortUnit);
            if (has(P.speed, i)) rows.push("speed      " + num(P.speed[i] / U.speed, 1) + " " + U.speedUnit);
            if (has(P.dist, i)) rows.push("distance   " + num(P.dist[i] / U.dist, 3) + " " + U.distUnit);
            if (has(P.hr, i)) rows.push("heart rate " + num(P.hr[i], 0) + " bpm");
            if (has(P.cad, i)) rows.push("cadence    " + num(P.cad[i], 0) + " rpm");
            if (has(P.temp, i)) rows.push("temperature " + num(U.temp === "°F" ? P.temp[i] * 9 / 5 + 32 : P.temp[i], 1) + " " + U.temp);
            if (has(P.power, i)) rows.push("power      " + num(P.power[i], 0) + " W");
            if (has(P.err, i)) rows.push("from truth " + num(P.err[i] / U.short, 1) + " " + U.shortUnit);
            if (P.cat) rows.push("fix        " + data.categories[P.cat[i]] + (P.why ? " (" + data.reasons[P.why[i]] + ")" : ""));
            return rows.join("\n");
          }
          // The map's view: a zoom k and a shift (tx, ty) of the map's content inside its panel,
          // in the picture's viewBox units; points are drawn at base pixels (P.x, P.y).
          const SVGNS = "http://www.w3.org/2000/svg";
          const M = data.map, mapSvg = document.getElementById("map-svg");
          const view = document.getElementById("map-view"), overlayView = document.getElementById("overlay-view");
          let k = 1, tx = 0, ty = 0;
          const toBase = (x, y) => [(x - tx) / k, (y - ty) / k];
          const fromBase = (x, y) => [x * k + tx, y * k + ty];
          function keepSizes() {
            // Marks and names keep their size on the screen: only where they are moves.
            for (const el of document.querySelectorAll("#map-view circle, #overlay-view circle")) {
              if (!el.dataset.r) { el.dataset.r = el.getAttribute("r"); el.dataset.sw = el.getAttribute("stroke-width") || ""; }
              el.setAttribute("r", el.dataset.r / k);
              if (el.dataset.sw) el.setAttribute("stroke-width", el.dataset.sw / k);
            }
            for (const el of document.querySelectorAll("#overlay-view line.tick")) {
              if (!el.dataset.cx) {
                el.dataset.cx = (+el.getAttribute("x1") + +el.getAttribute("x2")) / 2; el.dataset.hx = (el.getAttribute("x2") - el.getAttribute("x1")) / 2;
                el.dataset.cy = (+el.getAttribute("y1") + +el.getAttribute("y2")) / 2; el.dataset.hy = (el.getAttribute("y2") - el.getAttribute("y1")) / 2;
              }
              el.setAttribute("x1", el.dataset.cx - el.dataset.hx / k); el.setAttribute("x2", +el.dataset.cx + el.dataset.hx / k);
              el.setAttribute("y1", el.dataset.cy - el.dataset.hy / k); el.setAttribute("y2", +el.dataset.cy + el.dataset.hy / k);
            }
            const se = document.getElementById("start-end");
            if (se) se.setAttribute("stroke-width", 2 / k);
            const end = document.getElementById("end");
            if (end) {
              if (!end.dataset.cx) { end.dataset.cx = +end.getAttribute("x") + 6.5; end.dataset.cy = +end.getAttribute("y") + 6.5; }
              end.setAttribute("x", end.dataset.cx - 6.5 / k); end.setAttribute("y", end.dataset.cy - 6.5 / k);
              end.setAttribute("width", 13 / k); end.setAttribute("height", 13 / k);
            }
            for (const text of document.querySelectorAll("#map-view text")) {
              const mark = text.previousElementSibling;
              if (!mark) continue;
              if (!text.dataset.dx) {
                text.dataset.ax = mark.getAttribute("cx"); text.dataset.ay = mark.getAttribute("cy");
                text.dataset.dx = text.getAttribute("x") - text.dataset.ax; text.dataset.dy = text.getAttribute("y") - text.dataset.ay;
              }
              text.setAttribute("x", +text.dataset.ax + text.dataset.dx / k);
              text.setAttribute("y", +text.dataset.ay + text.dataset.dy / k);
              text.setAttribute("font-size", 12 / k);
            }
          }
          function roundIn(limit, unit) {
            const u = limit / unit;
            if (!(u >= 1e-9)) return null;
            let p = Math.pow(10, Math.floor(Math.log10(u)));
            if (p * 10 <= u) p *= 10;
            for (const m of [5, 2, 1]) if (m * p <= u * (1 + 1e-12)) return m * p;
            return p;
          }
          function roundDistance(limit) {
            const n = roundIn(limit, U.dist), text = (v) => String(parseFloat(v.toFixed(3)));
            if (n !== null && n >= (U.distUnit === "NM" ? 0.1 : 1)) return [n * U.dist, text(n) + " " + U.distUnit];
            const m = Math.max(1, roundIn(limit, U.short) || 1);
            return [m * U.short, text(m) + " " + U.shortUnit];
          }
          function drawScaleBar() {
            const bar = document.getElementById("scale-bar");
            if (!bar || !M || !(M.mpp > 0)) return;
            // Web Mercator's scale changes with latitude: the bar is for the view's centre.
            let mpp = M.mpp / k;
            if (M.kind === "mercator") {
              const [, by] = toBase(centre[0], centre[1]), Y = M.cy - (by - M.oy) / M.scale;
              mpp = Math.cos(2 * Math.atan(Math.exp(Y / 6378137)) - Math.PI / 2) / M.scale / k;
            }
            const [metres, label] = roundDistance(mpp * 180), length = metres / mpp;
            const rects = bar.querySelectorAll("rect"), texts = bar.querySelectorAll("text");
            rects[0].setAttribute("width", length); rects[1].setAttribute("width", length / 2);
            texts[1].setAttribute("x", length); texts[1].textContent = label;
          }
          // Map tiles (XYZ, 256 pixels, Web Mercator), when the page was made with some: the zoom
          // whose tiles show at about their own size, every tile the panel shows.
          const T = data.tiles, tilesG = document.getElementById("tiles"), tileEls = new Map();
          const WORLD = 2 * Math.PI * 6378137;
          function drawTiles() {
            if (!T || !M || !tilesG || !mapSvg) return;
            const r = mapSvg.getBoundingClientRect(), css = r.width > 0 ? r.width / 1000 : 1;
            const z = Math.max(0, Math.min(T.maxZoom, Math.round(Math.log2(WORLD * M.scale * k * css / 256))));
            const n = Math.pow(2, z), size = WORLD / n;
            const [px, py, pw, ph] = M.panel;
            const plane = (x, y) => { const [bx, by] = toBase(x, y); return [M.cx + (bx - M.ox) / M.scale, M.cy - (by - M.oy) / M.scale]; };
            const [X0, Y1] = plane(px, py), [X1, Y0] = plane(px + pw, py + ph);
            const i0 = Math.floor((X0 + WORLD / 2) / size), i1 = Math.floor((X1 + WORLD / 2) / size);
            const j0 = Math.max(0, Math.floor((WORLD / 2 - Y1) / size)), j1 = Math.min(n - 1, Math.floor((WORLD / 2 - Y0) / size));
            const wanted = new Set();
            if ((i1 - i0 + 1) * (j1 - j0 + 1) <= 600) {
              for (let j = j0; j <= j1; j++) {
                for (let i = i0; i <= i1; i++) {
                  const key = z + "/" + i + "/" + j;
                  wanted.add(key);
                  let img = tileEls.get(key);
                  if (!img) {
                    const x = ((i % n) + n) % n;
                    img = document.createElementNS(SVGNS, "image");
                    img.setAttribute("href", T.template.replaceAll("{z}", z).replaceAll("{x}", x).replaceAll("{y}", j)
                      .replaceAll("{-y}", n - 1 - j).replaceAll("{s}", "abc"[(x + j) % 3]));
                    img.setAttribute("preserveAspectRatio", "none");
                    img.dataset.tile = z + "/" + x + "/" + j;
                    tilesG.appendChild(img);
                    tileEls.set(key, img);
                  }
                  const [vx, vy] = fromBase(M.ox + (-WORLD / 2 + i * size - M.cx) * M.scale, M.oy - (WORLD / 2 - j * size - M.cy) * M.scale);
                  const side = size * M.scale * k;
                  img.setAttribute("x", vx); img.setAttribute("y", vy);
                  // A quarter pixel more hides the seams between tiles.
                  img.setAttribute("width", side + 0.25); img.setAttribute("height", side + 0.25);
                }
              }
            }
            for (const [key, img] of tileEls) if (!wanted.has(key)) { img.remove(); tileEls.delete(key); }
          }
          function applyView() {
            const transform = "translate(" + tx + " " + ty + ") scale(" + k + ")";
            if (view) view.setAttribute("transform", transform);
            if (overlayView) overlayView.setAttribute("transform", transform);
            keepSizes(); drawScaleBar(); drawTiles();
          }
          // Zooms by `factor` about the viewBox point x, y; zoom 1 shows the whole trace.
          function zoomAt(x, y, factor) {
            const next = Math.min(1 << 16, Math.max(1, k * factor)), f = next / k;
            tx = x - (x - tx) * f; ty = y - (y - ty) * f; k = next;
            if (k === 1) { tx = 0; ty = 0; }
            applyView();
          }
          function nearestOnMap(x, y) {
            let best = -1, bestD = Infinity;
            for (let i = 0; i < n; i++) {
              const dx = P.x[i] - x, dy = P.y[i] - y, d = dx * dx + dy * dy;
              if (d < bestD) { bestD = d; best = i; }
            }
            return best;
          }
          function nearestBy(column, v) {
            let best = -1, bestD = Infinity;
            for (let i = 0; i < n; i++) {
              if (column[i] === null) continue;
              const d = Math.abs(column[i] - v);
              if (d < bestD) { bestD = d; best = i; }
            }
            return best;
          }
          function eventsAround(t, span) {
            if (!data.events) return [];
            const E = data.events;
            let lo = 0, hi = E.length;
            while (lo < hi) { const mid = (lo + hi) >> 1; if (E[mid][0] < t - span) lo = mid + 1; else hi = mid; }
            const out = [];
            for (let k = lo; k < E.length && E[k][0] <= t + span && out.length < 200; k++) out.push(E[k]);
            if (out.length === 0 && E.length > 0) {
              const k = Math.min(lo, E.length - 1), j = Math.max(lo - 1, 0);
              out.push(Math.abs(E[k][0] - t) < Math.abs(E[j][0] - t) ? E[k] : E[j]);
            }
            return out;
          }
          // `own`: the text that marks the selected fix's own line (a report's fix index).
          function showEvents(t, span, heading, own) {
            if (!details) return;
            details.textContent = "";
            const h = document.createElement("div");
            h.className = "hint";
            const found = eventsAround(t, span);
            const near = found.length > 0 && Math.abs(found[0][0] - t) <= span;
            h.textContent = near || found.length === 0 ? heading
              : "No audit event within " + Math.round(span) + " s of " + iso(t) + "; the nearest:";
            details.appendChild(h);
            for (const [, line] of found) {
              const row = document.createElement("div");
              row.textContent = line;
              if (own && line.indexOf(own) >= 0) row.className = "now";
              details.appendChild(row);
            }
          }
          function moveChartCursors(i) {
            for (const c of data.charts || []) {
              const line = document.getElementById(c.id + "-cursor");
              const v = c.axis === "t" ? P.t[i] : P.dist[i];
              if (!line) continue;
              if (v === null || c.d1 === c.d0) { line.setAttribute("visibility", "hidden"); continue; }
              const x = c.p0 + (v - c.d0) / (c.d1 - c.d0) * (c.p1 - c.p0);
              line.setAttribute("x1", x); line.setAttribute("x2", x); line.setAttribute("visibility", "visible");
            }
            if (data.timeline && P.t[i] !== null) moveTimelineCursor(P.t[i]);
          }
          function moveTimelineCursor(t) {
            const T = data.timeline, line = document.getElementById(T.id + "-cursor");
            if (!line || T.t1 === T.t0) return;
            const x = T.p0 + (t - T.t0) / (T.t1 - T.t0) * (T.p1 - T.p0);
            line.setAttribute("x1", x); line.setAttribute("x2", x); line.setAttribute("visibility", "visible");
          }
          function select(i, clientX, clientY, fromClick) {
            if (i < 0 || i >= n) return;
            if (marker) {
              marker.setAttribute("cx", P.x[i]); marker.setAttribute("cy", P.y[i]);
              marker.setAttribute("visibility", "visible");
            }
            moveChartCursors(i);
            tip.textContent = describe(i);
            tip.hidden = false;
            let x = clientX, y = clientY;
            if (x === undefined && overlay) {
              const r = overlay.getBoundingClientRect(), [vx, vy] = fromBase(P.x[i], P.y[i]);
              x = r.left + vx / 1000 * r.width; y = r.top + vy / 760 * r.height;
            }
            const w = tip.offsetWidth, h = tip.offsetHeight;
            tip.style.left = Math.max(4, Math.min(window.innerWidth - w - 4, (x || 0) + 14)) + "px";
            tip.style.top = Math.max(4, Math.min(window.innerHeight - h - 4, (y || 0) + 14)) + "px";
            if (fromClick && P.t[i] !== null) {
              const own = P.idx ? '"event":"fix","index":' + P.idx[i] + "," : null;
              showEvents(P.t[i], 1, "Audit events within 1 s of " + iso(P.t[i]) + ":", own);
            }
          }
          function svgPoint(svg, e, width, height) {
            const r = svg.getBoundingClientRect();
            return [(e.clientX - r.left) / r.width * width, (e.clientY - r.top) / r.height * height];
          }
          if (overlay) {
            // Drag pans; a press that moves less than 4 pixels is a click.
            let drag = null, dragged = false;
            overlay.addEventListener("pointerdown", (e) => {
              if (e.button !== 0) return;
              drag = [e.clientX, e.clientY, tx, ty]; dragged = false;
            });
            window.addEventListener("pointerup", () => { drag = null; });
            overlay.addEventListener("mousemove", (e) => {
              if (drag && e.buttons & 1) {
                const r = overlay.getBoundingClientRect(), s = 1000 / r.width;
                const dx = (e.clientX - drag[0]) * s, dy = (e.clientY - drag[1]) * s;
                if (Math.abs(dx) + Math.abs(dy) > 4 * s) dragged = true;
                if (dragged) { tx = drag[2] + dx; ty = drag[3] + dy; applyView(); tip.hidden = true; return; }
              }
              const [x, y] = svgPoint(overlay, e, 1000, 760), [bx, by] = toBase(x, y);
              select(nearestOnMap(bx, by), e.clientX, e.clientY, false);
            });
            overlay.addEventListener("click", (e) => {
              if (dragged) { dragged = false; return; }
              const [x, y] = svgPoint(overlay, e, 1000, 760), [bx, by] = toBase(x, y);
              select(nearestOnMap(bx, by), e.clientX, e.clientY, true);
            });
            overlay.addEventListener("dblclick", (e) => {
              const [x, y] = svgPoint(overlay, e, 1000, 760);
              zoomAt(x, y, 2);
            });
            overlay.addEventListener("wheel", (e) => {
              if (e.deltaY === 0) return;
              e.preventDefault();
              const [x, y] = svgPoint(overlay, e, 1000, 760);
              zoomAt(x, y, e.deltaY < 0 ? 1.25 : 0.8);
            }, { passive: false });
            overlay.addEventListener("mouseleave", () => { tip.hidden = true; });
          }
          const button = (id, f) => { const b = document.getElementById(id); if (b) b.addEventListener("click", f); };
          const centre = M ? [M.panel[0] + M.panel[2] / 2, M.panel[1] + M.panel[3] / 2] : [500, 368];
          button("zoom-in", () => zoomAt(centre[0], centre[1], 1.5));
          button("zoom-out", () => zoomAt(centre[0], centre[1], 1 / 1.5));
          button("zoom-reset", () => { k = 1; tx = 0; ty = 0; applyView(); });
          applyView();
          for (const c of data.charts || []) {
            const svg = document.getElementById(c.id);
            if (!svg) continue;
            const vb = svg.viewBox.baseVal;
            const pick = (e) => {
              const [x] = svgPoint(svg, e, vb.width, vb.height);
              const v = c.d0 + (x - c.p0) / (c.p1 - c.p0) * (c.d1 - c.d0);
              return nearestBy(c.axis === "t" ? P.t : P.dist, v);
            };
            svg.addEventListener("mousemove", (e) => select(pick(e), e.clientX, e.clientY, false));
            svg.addEventListener("click", (e) => select(pick(e), e.clientX, e.clientY, true));
            svg.addEventListener("mouseleave", () => { tip.hidden = true; });
          }
          if (data.timeline) {
            const T = data.timeline, svg = document.getElementById(T.id);
            const vb = svg.viewBox.baseVal;
            const at = (e) => { const [x] = svgPoint(svg, e, vb.width, vb.height);
              return T.t0 + (x - T.p0) / (T.p1 - T.p0) * (T.t1 - T.t0); };
            svg.addEventListener("mousemove", (e) => {
              const t = at(e);
              moveTimelineCursor(t);
              tip.textContent = iso(t);
              tip.hidden = false;
              tip.style.left = (e.clientX + 14) + "px"; tip.style.top = (e.clientY + 14) + "px";
            });
            svg.addEventListener("mouseleave", () => { tip.hidden = true; });
            svg.addEventListener("click", (e) => {
              const t = at(e), span = Math.max(1, 4 * (T.t1 - T.t0) / (T.p1 - T.p0));
              const i = P.t ? nearestBy(P.t, t) : -1;
              if (i >= 0) select(i, e.clientX, e.clientY, false);
              moveTimelineCursor(t);
              showEvents(t, span, "Audit events within " + Math.round(span) + " s of " + iso(t) + ":");
            });
          }
          const showAxis = (value) => {
            for (const el of document.querySelectorAll("[data-axis]")) el.hidden = el.dataset.axis !== value;
          };
          for (const input of document.querySelectorAll("input[name=axis]")) {
            input.addEventListener("change", () => showAxis(input.value));
            // A browser that restores the form on reload may have checked the other axis.
            if (input.checked) showAxis(input.value);
          }
          function fromHash() {
            let h = "";
            try { h = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
            if (h.startsWith("point=")) {
              // A report's points are fixes: N is the fix's index in the audit log.
              const N = parseInt(h.slice(6), 10);
              const i = P.idx ? nearestBy(P.idx, N) : N;
              if (i >= 0 && i < n) select(i, undefined, undefined, true);
            } else if (h.startsWith("time=")) {
              let text = h.slice(5);
              // Audit times are UTC: a time without a zone is read as UTC, not local time.
              if (/T\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(text)) text += "Z";
              const t = Date.parse(text) / 1000;
              if (!isNaN(t)) {
                const i = nearestBy(P.t, t);
                if (i >= 0) select(i, undefined, undefined, false);
                showEvents(t, 1, "Audit events within 1 s of " + iso(t) + ":");
              }
            }
          }
          window.addEventListener("hashchange", fromHash);
          fromHash();
        })();
        """#
}

/// A line chart of one value against time or distance, as inline SVG: axes with round ticks,
/// one polyline per segment (gaps stay gaps), simplified with Douglas–Peucker to half a pixel,
/// and a cursor line the page's script moves.
struct HTMLChart {
    enum Axis: String {
        case time = "t"
        case distance = "dist"
    }

    static let width = 1000.0
    static let height = 190.0
    static let left = 64.0
    static let right = 976.0
    static let top = 14.0
    static let bottom = 156.0

    var id: String
    var title: String
    var unit: String
    var colour: String
    var axis: Axis
    /// The x values (seconds since 1970, or metres) and y values; NaN is no value.
    var xs: [Double]
    var ys: [Double]
    /// The segment of each point: a change starts a new line.
    var segments: [Int]
    /// Multiplies y for display (3.6 for m/s shown as km/h).
    var scale = 1.0
    /// The distance axis' unit: metres in one, and its symbol.
    var distanceUnit: (metres: Double, symbol: String) = (1000, "km")
    /// The time axis' zone.
    var zone = DisplayTimeZone.utc

    init(
        id: String, title: String, unit: String, colour: String, axis: Axis, xs: [Double], ys: [Double],
        segments: [Int], scale: Double = 1, distanceUnit: (metres: Double, symbol: String) = (1000, "km"),
        zone: DisplayTimeZone = .utc
    ) {
        self.id = id
        self.title = title
        self.unit = unit
        self.colour = colour
        self.axis = axis
        self.xs = xs
        self.ys = ys
        self.segments = segments
        self.scale = scale
        self.distanceUnit = distanceUnit
        self.zone = zone
    }

    /// What the x axis is: "time (UTC)", "distance (mi)".
    var axisName: String {
        axis == .time ? "time (\(zone.name))" : "distance (\(distanceUnit.symbol))"
    }

    /// The data range it spans, for the script: nil when there is nothing to draw.
    func range() -> (d0: Double, d1: Double)? {
        var lo = Double.infinity
        var hi = -Double.infinity
        for i in xs.indices where xs[i].isFinite && ys[i].isFinite {
            lo = min(lo, xs[i])
            hi = max(hi, xs[i])
        }
        return lo.isFinite ? (lo, hi) : nil
    }

    /// Writes the chart; returns its entry for the data island's `charts`, or nil when it has no
    /// points.
    func write(to out: ByteStore, hidden: Bool) -> (d0: Double, d1: Double)? {
        guard let (x0, x1Raw) = range() else { return nil }
        var y0 = Double.infinity
        var y1 = -Double.infinity
        for i in ys.indices where xs[i].isFinite && ys[i].isFinite {
            y0 = min(y0, ys[i] * scale)
            y1 = max(y1, ys[i] * scale)
        }
        let x1 = x1Raw > x0 ? x1Raw : x0 + 1
        // A flat line (to rounding) gets an axis a unit high, not one of rounding errors.
        let (yTicks, yLo, yHi) = Self.ticks(y0, y1 - y0 > 1e-9 * max(1, abs(y0)) ? y1 : y0 + 1)
        func px(_ x: Double) -> Double { Self.left + (x - x0) / (x1 - x0) * (Self.right - Self.left) }
        func py(_ y: Double) -> Double { Self.bottom - (y * scale - yLo) / (yHi - yLo) * (Self.bottom - Self.top) }

        out.append("<div class=\"chart\" data-axis=\"\(axis.rawValue)\"\(hidden ? " hidden" : "")>\n")
        out.append(
            "<svg id=\"\(id)\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(Int(Self.width)) \(Int(Self.height))\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\" role=\"img\">\n"
        )
        out.append("<title>")
        HTMLPage.appendText("\(title) (\(unit)) against \(axisName)", to: out)
        out.append("</title>\n")
        out.append(
            "<rect x=\"\(Int(Self.left))\" y=\"\(Int(Self.top))\" width=\"\(Int(Self.right - Self.left))\" height=\"\(Int(Self.bottom - Self.top))\" fill=\"#f6f8fa\" stroke=\"#d0d7de\"/>\n"
        )
        // Y ticks and grid.
        out.append("<g fill=\"#57606a\" stroke=\"none\" text-anchor=\"end\">\n")
        for t in yTicks {
            let y = py(t / scale)
            out.append("<line x1=\"\(Int(Self.left))\" x2=\"\(Int(Self.right))\" y1=\"")
            SVGWriter.appendNumber(y, to: out)
            out.append("\" y2=\"")
            SVGWriter.appendNumber(y, to: out)
            out.append("\" stroke=\"#d8dee4\"/><text x=\"\(Int(Self.left) - 6)\" y=\"")
            SVGWriter.appendNumber(y + 4, to: out)
            out.append("\">")
            HTMLPage.appendText(Self.label(t), to: out)
            out.append("</text>\n")
        }
        out.append("</g>\n")
        // X ticks.
        out.append("<g fill=\"#57606a\" text-anchor=\"middle\">\n")
        let unit = distanceUnit.metres
        let offset = Double(zone.offset(at: x0))
        let xTicks =
            axis == .time
            ? Self.timeTicks(x0 + offset, x1 + offset).map { $0 - offset }
            : Self.ticks(x0 / unit, x1 / unit).0.map { $0 * unit }
        for t in xTicks
        where t >= x0 - 1e-9 && t <= x1 + 1e-9 {
            let x = px(t)
            out.append("<line y1=\"\(Int(Self.bottom))\" y2=\"\(Int(Self.bottom) + 5)\" x1=\"")
            SVGWriter.appendNumber(x, to: out)
            out.append("\" x2=\"")
            SVGWriter.appendNumber(x, to: out)
            out.append("\" stroke=\"#57606a\"/><text y=\"\(Int(Self.bottom) + 19)\" x=\"")
            SVGWriter.appendNumber(x, to: out)
            out.append("\">")
            HTMLPage.appendText(
                axis == .time ? Self.clock(t + Double(zone.offset(at: t)), span: x1 - x0) : Self.label(t / unit),
                to: out)
            out.append("</text>\n")
        }
        out.append("</g>\n")
        out.append("<text x=\"\(Int(Self.left))\" y=\"\(Int(Self.height) - 2)\" fill=\"#24292f\">")
        HTMLPage.appendText(
            "\(title), \(self.unit) — against \(axisName)", to: out)
        out.append("</text>\n")
        // The lines, one per run of points of one segment.
        out.append(
            "<g fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\" stroke-linejoin=\"round\" stroke-linecap=\"round\">\n"
        )
        var run: [(x: Double, y: Double)] = []
        func flush() {
            guard !run.isEmpty else { return }
            let kept = SVGWriter.simplify(run, tolerance: SVGWriter.tolerance)
            out.append("<polyline points=\"")
            for (k, index) in kept.enumerated() {
                if k > 0 { out.append(UInt8(ascii: " ")) }
                SVGWriter.appendNumber(run[index].x, to: out)
                out.append(UInt8(ascii: ","))
                SVGWriter.appendNumber(run[index].y, to: out)
            }
            if kept.count == 1 {
                out.append(UInt8(ascii: " "))
                SVGWriter.appendNumber(run[0].x + 0.5, to: out)
                out.append(UInt8(ascii: ","))
                SVGWriter.appendNumber(run[0].y, to: out)
            }
            out.append("\"/>\n")
            run.removeAll(keepingCapacity: true)
        }
        var previousSegment = segments.first ?? 0
        var previousX = -Double.infinity
        for i in xs.indices {
            guard xs[i].isFinite, ys[i].isFinite else {
                flush()
                continue
            }
            // A new segment, or time going back, starts a new line.
            if segments[i] != previousSegment || xs[i] < previousX { flush() }
            previousSegment = segments[i]
            previousX = xs[i]
            run.append((px(xs[i]), py(ys[i])))
        }
        flush()
        out.append("</g>\n")
        out.append(
            "<line id=\"\(id)-cursor\" y1=\"\(Int(Self.top))\" y2=\"\(Int(Self.bottom))\" x1=\"0\" x2=\"0\" stroke=\"#cf222e\" stroke-width=\"1.5\" visibility=\"hidden\"/>\n"
        )
        out.append("</svg>\n</div>\n")
        return (x0, x1)
    }

    /// Round ticks (1, 2 or 5 times a power of ten) covering `lo`–`hi`, and the range they span.
    static func ticks(_ lo: Double, _ hi: Double) -> ([Double], Double, Double) {
        let span = hi - lo
        guard span.isFinite, span > 0 else { return ([lo], lo - 1, lo + 1) }
        let raw = span / 5
        let power = pow(10, (log10(raw)).rounded(.down))
        let step = [1.0, 2.0, 5.0, 10.0].map { $0 * power }.first { $0 >= raw } ?? power * 10
        let first = (lo / step).rounded(.down) * step
        let last = (hi / step).rounded(.up) * step
        var values: [Double] = []
        var v = first
        while v <= last + step / 2 && values.count < 20 {
            values.append(abs(v) < step / 1e6 ? 0 : v)
            v += step
        }
        return (values, first, max(last, first + step))
    }

    /// Round clock times between `lo` and `hi` (seconds since 1970).
    static func timeTicks(_ lo: Double, _ hi: Double) -> [Double] {
        let steps: [Double] = [
            1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
        ]
        let raw = (hi - lo) / 6
        let step = steps.first { $0 >= raw } ?? (raw / 86400).rounded(.up) * 86400
        var t = (lo / step).rounded(.up) * step
        var values: [Double] = []
        while t <= hi && values.count < 20 {
            values.append(t)
            t += step
        }
        return values
    }

    /// `HH:MM` (or `HH:MM:SS` for spans under ten minutes) of `t` as given (UTC, or shifted into a
    /// zone); with the date for spans over a day.
    static func clock(_ t: Double, span: Double) -> String {
        let iso = ValueFormatting.iso8601(Date(timeIntervalSince1970: t))  // …-MM-DDThh:mm:ss.sssZ
        guard let tee = iso.firstIndex(of: "T") else { return iso }
        let time = iso[iso.index(after: tee)...].prefix(span < 600 ? 8 : 5)
        return span > 86400 ? "\(iso[..<tee]) \(time)" : String(time)
    }

    /// A tick label: as few decimals as the value needs (at most 3).
    static func label(_ v: Double) -> String { DisplayUnits.number(v) }
}
