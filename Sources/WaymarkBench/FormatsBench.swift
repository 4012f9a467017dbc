// waymark-bench formats: the activity formats → GeoJSON (issue 29, item 2). One synthetic
// activity (1 Hz, elevation, heart rate, a pause every hour) is written by gpsbabel as TCX, KML
// (gx:Track), GeoJSON, unicsv and FIT (its course writer), and by Waymark as GeoJSON: files laid
// out as those writers lay them out. Each is converted to GeoJSON by `waymark render`, by gpsbabel
// (-i FORMAT) and, where GDAL reads the format, by ogr2ogr, in the same run, alternately, best of
// three; the table gives points/s, peak RSS and how many times faster Waymark is.
//
// usage: waymark-bench formats [--points 200000] [--dir bench-out] [--waymark PATH]

import Foundation
import Waymark

#if canImport(Glibc)
    import Glibc
#endif

enum FormatsBench {
    struct Input {
        var name: String
        var path: String
        var gpsbabelFormat: String
        /// ogr2ogr's arguments before the output and input, or nil when GDAL does not read it.
        var ogr: [String]?
    }

    static func run(arguments: [String]) throws {
        var points = 200_000
        var dir = "bench-out"
        var waymark = ".build/release/waymark"
        var args = arguments.makeIterator()
        while let a = args.next() {
            switch a {
            case "--points": points = Int(args.next() ?? "") ?? points
            case "--dir": dir = args.next() ?? dir
            case "--waymark": waymark = args.next() ?? waymark
            default:
                FileHandle.standardError.write(Data("waymark-bench formats: unknown argument \(a)\n".utf8))
                exit(64)
            }
        }
        guard available("gpsbabel") else {
            print("waymark-bench formats: needs gpsbabel to write the inputs (scripts/bench.sh --install-peers)")
            exit(69)
        }
        let hasOgr = available("ogr2ogr")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let gpx = "\(dir)/formats-\(points).gpx"
        if !FileManager.default.fileExists(atPath: gpx) {
            // generate() writes by size: about 190 bytes a point in its layout.
            try generate(path: gpx, bytes: points * 190)
        }
        var inputs: [Input] = []
        func babel(
            _ name: String, _ format: String, _ ext: String, read: String? = nil, filter: [String] = [], ogr: [String]?
        ) {
            let path = "\(dir)/formats-\(points).\(name).\(ext)"
            if !FileManager.default.fileExists(atPath: path) {
                let m = measure(["gpsbabel", "-i", "gpx", "-f", gpx] + filter + ["-o", format, "-F", path])
                guard m.status == 0 else {
                    print("gpsbabel could not write \(name); left out")
                    return
                }
            }
            inputs.append(Input(name: name, path: path, gpsbabelFormat: read ?? format, ogr: ogr))
        }
        babel("tcx", "gtrnctr,course=0,sport=Running", "tcx", read: "gtrnctr", ogr: nil)
        babel("kml", "kml,track=1,points=0", "kml", read: "kml", ogr: ["-f", "GeoJSON"])
        babel("geojson-gpsbabel", "geojson", "geojson", ogr: ["-f", "GeoJSON"])
        babel(
            "csv", "unicsv", "csv", read: "unicsv", filter: ["-x", "transform,wpt=trk,del"],
            ogr: ["-f", "GeoJSON", "-oo", "X_POSSIBLE_NAMES=Longitude", "-oo", "Y_POSSIBLE_NAMES=Latitude"])
        babel("fit", "garmin_fit", "fit", ogr: nil)
        let own = "\(dir)/formats-\(points).geojson-waymark.geojson"
        if !FileManager.default.fileExists(atPath: own) {
            _ = measure([waymark, "render", gpx, "-o", own])
        }
        inputs.append(Input(name: "geojson-waymark", path: own, gpsbabelFormat: "geojson", ogr: ["-f", "GeoJSON"]))

        print("waymark-bench formats: \(points) points (1 Hz, elevation, heart rate), each format → GeoJSON")
        print("peers: gpsbabel yes, ogr2ogr \(hasOgr ? "yes" : "not installed")")
        print(
            "\(column("input", 18))  \(column("MB", 6))  \(column("waymark s", 9))  \(column("pt/s", 9))  \(column("RSS MiB", 7))  "
                + "\(column("gpsbabel s", 10))  \(column("× gpsbabel", 10))  \(column("ogr2ogr s", 9))  \(column("× ogr2ogr", 9))"
        )
        let out = "\(dir)/formats-out.geojson"
        for input in inputs {
            let size = (try? FileManager.default.attributesOfItem(atPath: input.path)[.size] as? Int) ?? 0
            let (ours, gpsbabel) = ReplayCLIBench.bestAlternately(
                [waymark, "render", input.path, "--format", "geojson", "-o", out],
                ["gpsbabel", "-i", input.gpsbabelFormat, "-f", input.path, "-o", "geojson", "-F", out])
            var ogrSeconds: Double?
            if hasOgr, let ogr = input.ogr {
                // GDAL's GeoJSON driver writes no file that exists: each run removes it first.
                let command = (["ogr2ogr"] + ogr + [out, input.path]).map { "'\($0)'" }.joined(separator: " ")
                let m = ReplayCLIBench.best(["sh", "-c", "rm -f '\(out)' && exec \(command)"])
                if m.status == 0 { ogrSeconds = m.seconds }
            }
            let failed = ours.status != 0
            print(
                "\(column(input.name, 18))  \(column(String(format: "%.1f", Double(size) / 1e6), 6))  "
                    + "\(column(failed ? "failed" : String(format: "%.3f", ours.seconds), 9))  "
                    + "\(column(failed ? "-" : String(Int(Double(points) / ours.seconds)), 9))  "
                    + "\(column(String(format: "%.1f", Double(ours.peakRSS) / 1_048_576), 7))  "
                    + "\(column(gpsbabel.map { $0.status == 0 ? String(format: "%.2f", $0.seconds) : "failed" } ?? "-", 10))  "
                    + "\(column(gpsbabel.map { $0.status == 0 ? String(format: "%.1f×", $0.seconds / ours.seconds) : "-" } ?? "-", 10))  "
                    + "\(column(ogrSeconds.map { String(format: "%.2f", $0) } ?? "-", 9))  "
                    + "\(column(ogrSeconds.map { String(format: "%.1f×", $0 / ours.seconds) } ?? "-", 9))")
        }
    }
}
