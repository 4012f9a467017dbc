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
        .map svg.overlay { position: absolute; left: 0; top: 0; height: 100%; cursor: crosshair; }
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
          const pad = (v) => (v < 10 ? "0" : "") + v;
          const iso = (t) => { const d = new Date(t * 1000); return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) +
            "-" + pad(d.getUTCDate()) + " " + pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" +
            pad(d.getUTCSeconds()) + " UTC"; };
          const num = (v, d) => (v === null || v === undefined ? null : Number(v).toFixed(d));
          function describe(i) {
            const rows = [];
            if (P.t[i] !== null) rows.push("time       " + iso(P.t[i]));
            rows.push("position   " + num(P.lat[i], 6) + ", " + num(P.lon[i], 6));
            if (P.ele && P.ele[i] !== null) rows.push("elevation  " + num(P.ele[i], 1) + " m");
            if (P.speed && P.speed[i] !== null) rows.push("speed      " + num(P.speed[i] * 3.6, 1) + " km/h");
            if (P.dist && P.dist[i] !== null) rows.push("distance   " + num(P.dist[i] / 1000, 3) + " km");
            if (P.cat) rows.push("fix        " + data.categories[P.cat[i]] + (P.why ? " (" + data.reasons[P.why[i]] + ")" : ""));
            return rows.join("\n");
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
              const r = overlay.getBoundingClientRect();
              x = r.left + P.x[i] / 1000 * r.width; y = r.top + P.y[i] / 760 * r.height;
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
            overlay.addEventListener("mousemove", (e) => {
              const [x, y] = svgPoint(overlay, e, 1000, 760);
              select(nearestOnMap(x, y), e.clientX, e.clientY, false);
            });
            overlay.addEventListener("click", (e) => {
              const [x, y] = svgPoint(overlay, e, 1000, 760);
              select(nearestOnMap(x, y), e.clientX, e.clientY, true);
            });
            overlay.addEventListener("mouseleave", () => { tip.hidden = true; });
          }
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
        let (yTicks, yLo, yHi) = Self.ticks(y0, y1 > y0 ? y1 : y0 + 1)
        func px(_ x: Double) -> Double { Self.left + (x - x0) / (x1 - x0) * (Self.right - Self.left) }
        func py(_ y: Double) -> Double { Self.bottom - (y * scale - yLo) / (yHi - yLo) * (Self.bottom - Self.top) }

        out.append("<div class=\"chart\" data-axis=\"\(axis.rawValue)\"\(hidden ? " hidden" : "")>\n")
        out.append(
            "<svg id=\"\(id)\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(Int(Self.width)) \(Int(Self.height))\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\" role=\"img\">\n"
        )
        out.append("<title>")
        HTMLPage.appendText("\(title) (\(unit)) against \(axis == .time ? "time (UTC)" : "distance (km)")", to: out)
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
        for t in axis == .time ? Self.timeTicks(x0, x1) : Self.ticks(x0 / 1000, x1 / 1000).0.map({ $0 * 1000 })
        where t >= x0 - 1e-9 && t <= x1 + 1e-9 {
            let x = px(t)
            out.append("<line y1=\"\(Int(Self.bottom))\" y2=\"\(Int(Self.bottom) + 5)\" x1=\"")
            SVGWriter.appendNumber(x, to: out)
            out.append("\" x2=\"")
            SVGWriter.appendNumber(x, to: out)
            out.append("\" stroke=\"#57606a\"/><text y=\"\(Int(Self.bottom) + 19)\" x=\"")
            SVGWriter.appendNumber(x, to: out)
            out.append("\">")
            HTMLPage.appendText(axis == .time ? Self.clock(t, span: x1 - x0) : Self.label(t / 1000), to: out)
            out.append("</text>\n")
        }
        out.append("</g>\n")
        out.append("<text x=\"\(Int(Self.left))\" y=\"\(Int(Self.height) - 2)\" fill=\"#24292f\">")
        HTMLPage.appendText(
            "\(title), \(unit) — against \(axis == .time ? "time (UTC)" : "distance (km)")", to: out)
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

    /// `HH:MM` (or `HH:MM:SS` for spans under ten minutes), UTC; with the date for spans over a day.
    static func clock(_ t: Double, span: Double) -> String {
        let iso = ValueFormatting.iso8601(Date(timeIntervalSince1970: t))  // …-MM-DDThh:mm:ss.sssZ
        guard let tee = iso.firstIndex(of: "T") else { return iso }
        let time = iso[iso.index(after: tee)...].prefix(span < 600 ? 8 : 5)
        return span > 86400 ? "\(iso[..<tee]) \(time)" : String(time)
    }

    /// A tick label: as few decimals as the value needs (at most 3).
    static func label(_ v: Double) -> String {
        for decimals in 0...3 {
            let text = ValueFormatting.fixed(v, decimals: decimals)
            if abs((Double(text) ?? v) - v) < 1e-9 * max(1, abs(v)) { return text }
        }
        return ValueFormatting.fixed(v, decimals: 3)
    }
}
