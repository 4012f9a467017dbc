/// A base map of raster tiles for a page, fetched by the reader's browser: the XYZ ("slippy map")
/// scheme of OpenStreetMap and most tile servers, 256-pixel tiles in Web Mercator (EPSG:3857).
///
/// The template names a tile with `{z}` (the zoom), `{x}` and `{y}` (the column and the row from
/// the north-west corner), and optionally `{-y}` (the row from the south-west, TMS) and `{s}` (a
/// subdomain, `a`, `b` or `c` in turn):
/// `https://tile.openstreetmap.org/{z}/{x}/{y}.png`.
public struct MapTiles: Sendable, Hashable {
    public var template: String
    /// What the page credits, as the tile server's terms ask; nil credits OpenStreetMap for its
    /// servers and names the host otherwise.
    public var attribution: String?
    /// The highest zoom to ask for.
    public var maxZoom: Int

    /// Why `template` cannot be a tile template, or nil when it can.
    public static func problem(with template: String) -> String? {
        let schemes = ["https://", "http://", "file://"]
        guard schemes.contains(where: { template.hasPrefix($0) }) else {
            return "a tile template is a URL beginning with https://, http:// or file://"
        }
        for key in ["{z}", "{x}"] where !template.contains(key) {
            return "a tile template names \(key), {x} and {y} (or {-y}): https://tile.openstreetmap.org/{z}/{x}/{y}.png"
        }
        if !template.contains("{y}") && !template.contains("{-y}") {
            return "a tile template names {z}, {x} and {y} (or {-y}): https://tile.openstreetmap.org/{z}/{x}/{y}.png"
        }
        if template.unicodeScalars.contains(where: { $0.value < 0x21 || $0 == "\"" || $0 == "<" || $0 == ">" }) {
            return "a tile template is a URL: spaces, quotes and angle brackets are written %20, %22, %3C, %3E"
        }
        return nil
    }

    /// Throws nothing: check ``problem(with:)`` first (the page fetches whatever it is given).
    public init(template: String, attribution: String? = nil, maxZoom: Int = 19) {
        self.template = template
        self.attribution = attribution
        self.maxZoom = min(max(maxZoom, 0), 24)
    }

    /// The scheme and host the tiles come from (`https://tile.openstreetmap.org`), or the
    /// folder of `file://` tiles.
    public var host: String {
        guard let schemeEnd = template.firstRange(of: "://") else { return template }
        let rest = template[schemeEnd.upperBound...]
        if template.hasPrefix("file://") {
            return "file://" + String(rest.prefix { $0 != "{" })
        }
        return String(template[..<schemeEnd.upperBound]) + String(rest.prefix { $0 != "/" })
    }

    /// The credit shown on the map.
    public var attributionText: String {
        if let attribution, !attribution.isEmpty { return attribution }
        if host.hasSuffix("openstreetmap.org") || host.hasSuffix(".openstreetmap.fr") {
            return "© OpenStreetMap contributors"
        }
        return "Tiles: \(host)"
    }
}
