// waymark-bench nmea [--sizes 10,100] [--dir bench-out] [--waymark PATH] [--only NAME,…]
//
// NMEA 0183 log → GeoJSON (issue 16, part 1) on the sentence layouts receivers write: a 1 Hz
// SiRF-style GPS receiver (GGA, GSA, GSV, RMC), a multi-constellation u-blox (GN talkers, a GSA
// per system, GSVs of four systems, VTG, GLL), a logger that keeps RMC alone, and a 10 Hz RTK
// receiver (GGA, RMC, GST). Per layout and size: Waymark's wall time (the median of 3), MB/s,
// fixes/s and peak RSS, then `gpsbabel -i nmea` on the same file in the same run, and how many
// times slower it is. The target: ≥ 200 MB/s on a 100 MB log.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

enum NMEABench {
    enum Layout: String, CaseIterable {
        case sirf, ublox, rmc, rtk

        var title: String {
            switch self {
            case .sirf: "SiRF 1 Hz"
            case .ublox: "u-blox GNSS"
            case .rmc: "RMC only"
            case .rtk: "RTK 10 Hz"
            }
        }
    }

    static func run(arguments: [String]) throws {
        var sizes = [10, 100]
        var dir = "bench-out"
        var waymark = ".build/release/waymark"
        var layouts = Layout.allCases
        var args = arguments.makeIterator()
        while let a = args.next() {
            switch a {
            case "--sizes": sizes = (args.next() ?? "").split(separator: ",").compactMap { Int($0) }
            case "--dir": dir = args.next() ?? dir
            case "--waymark": waymark = args.next() ?? waymark
            case "--only":
                let names = (args.next() ?? "").split(separator: ",").map(String.init)
                layouts = layouts.filter { names.contains($0.rawValue) }
            default:
                FileHandle.standardError.write(
                    Data(
                        "usage: waymark-bench nmea [--sizes 10,100] [--dir DIR] [--waymark PATH] [--only \(Layout.allCases.map(\.rawValue).joined(separator: ","))]\n"
                            .utf8))
                exit(64)
            }
        }
        guard FileManager.default.isExecutableFile(atPath: waymark) else {
            FileHandle.standardError.write(Data("waymark-bench: \(waymark) not found; run scripts/bench.sh\n".utf8))
            exit(69)
        }
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let hasGpsbabel = available("gpsbabel")
        print("waymark-bench nmea: NMEA 0183 log → GeoJSON on the sentence layouts of common receivers")
        print("peer: gpsbabel -i nmea \(hasGpsbabel ? "yes" : "not installed (scripts/bench.sh --install-peers)")")
        print("target: ≥ 200 MB/s on a 100 MB log")
        print("")
        print(
            [
                column("layout", 12), column("size", 7), column("fixes", 9), column("wall s", 7),
                column("MB/s", 7), column("Mfix/s", 7), column("RSS MiB", 8), column("gpsbabel", 9),
                column("×", 6),
            ].joined(separator: " "))
        for layout in layouts {
            for size in sizes {
                let input = "\(dir)/nmea-\(layout.rawValue)-\(size)MB.nmea"
                let fixes = try generate(layout, path: input, bytes: size * 1_000_000)
                let bytes = Double((try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? 0)
                let out = "\(dir)/nmea-out.geojson"
                var runs: [Measurement] = []
                for _ in 0..<3 {
                    runs.append(measure([waymark, "render", input, "--format", "geojson", "-o", out]))
                }
                let peak = runs.map(\.peakRSS).max() ?? 0
                runs.sort { $0.seconds < $1.seconds }
                let w = runs[1]
                var line = [
                    column(layout.title, 12), column("\(size) MB", 7), column("\(fixes)", 9),
                    column(String(format: "%.3f", w.seconds), 7),
                    column(String(format: "%.0f", bytes / 1e6 / w.seconds), 7),
                    column(String(format: "%.2f", Double(fixes) / w.seconds / 1e6), 7),
                    column(String(format: "%.1f", Double(peak) / 1_048_576), 8),
                ]
                if w.status != 0 { line.append("(waymark exit \(w.status))") }
                if hasGpsbabel {
                    try? FileManager.default.removeItem(atPath: out)
                    let m = measure(["gpsbabel", "-i", "nmea", "-f", input, "-o", "geojson", "-F", out])
                    line += [
                        column(String(format: "%.2f s", m.seconds), 9),
                        column(m.status == 0 ? String(format: "%.1f", m.seconds / w.seconds) : "exit \(m.status)", 6),
                    ]
                } else {
                    line += [column("-", 9), column("-", 6)]
                }
                try? FileManager.default.removeItem(atPath: out)
                print(line.joined(separator: " "))
                fflush(nil)
            }
        }
    }

    /// Writes about `bytes` of the layout's log (the same bytes every run); the number of fixes.
    static func generate(_ layout: Layout, path: String, bytes: Int) throws -> Int {
        guard let file = fopen(path + ".tmp", "w") else { throw POSIXError(.EIO) }
        var written = 0
        var fixes = 0
        var t = 0  // tenths of a second since 2024-05-01T00:00:00Z
        let step = layout == .rtk ? 1 : 10
        var lat = 48.137
        var lon = 11.575
        var heading = 40.0
        var alt = 520.0
        func put(_ body: String) {
            var sum: UInt8 = 0
            for b in body.utf8 { sum ^= b }
            let line = "$" + body + "*" + String(sum, radix: 16, uppercase: true).leftPadded(2) + "\r\n"
            fputs(line, file)
            written += line.utf8.count
        }
        while written < bytes {
            // A gentle wandering path: heading turns slowly, speed about 5 m/s.
            heading += sin(Double(t) / 600) * 2
            let speed = 5.0
            let dt = Double(step) / 10
            lat += cos(heading * .pi / 180) * speed * dt / 111_320
            lon += sin(heading * .pi / 180) * speed * dt / (111_320 * cos(lat * .pi / 180))
            alt += sin(Double(t) / 300) * 0.05
            let seconds = t / 10
            let day = 1 + seconds / 86_400 % 28
            let hms = String(
                format: "%02d%02d%02d.%02d", seconds / 3600 % 24, seconds / 60 % 60, seconds % 60, (t % 10) * 10)
            let date = String(format: "%02d0524", day)
            let (la, ns) = ddmm(lat, latitude: true)
            let (lo, ew) = ddmm(lon, latitude: false)
            let knots = String(format: "%.3f", speed * 3600 / 1852)
            let course = String(
                format: "%.2f",
                (heading.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360))
            let a = String(format: "%.1f", alt)
            switch layout {
            case .sirf:
                put("GPGGA,\(hms),\(la),\(ns),\(lo),\(ew),1,08,0.9,\(a),M,47.0,M,,")
                put("GPGSA,A,3,01,03,06,11,14,17,19,22,,,,,1.6,0.9,1.3")
                put("GPGSV,3,1,11,01,40,083,46,03,17,308,41,06,07,344,39,11,22,228,45")
                put("GPGSV,3,2,11,14,40,083,46,17,17,308,41,19,07,344,39,22,22,228,45")
                put("GPGSV,3,3,11,24,40,083,,28,17,308,,32,07,344,")
                put("GPRMC,\(hms),A,\(la),\(ns),\(lo),\(ew),\(knots),\(course),\(date),,,A")
            case .ublox:
                put("GNRMC,\(hms),A,\(la),\(ns),\(lo),\(ew),\(knots),\(course),\(date),,,A,V")
                put("GNVTG,\(course),T,,M,\(knots),N,18.000,K,A")
                put("GNGGA,\(hms),\(la),\(ns),\(lo),\(ew),1,16,0.56,\(a),M,-29.5,M,,")
                put("GNGSA,A,3,02,05,07,13,15,18,20,30,,,,,1.04,0.56,0.88,1")
                put("GNGSA,A,3,65,72,79,80,,,,,,,,,1.04,0.56,0.88,2")
                put("GNGSA,A,3,04,09,11,36,,,,,,,,,1.04,0.56,0.88,3")
                put("GPGSV,3,1,10,02,40,083,46,05,17,308,41,07,07,344,39,13,22,228,45,1")
                put("GPGSV,3,2,10,15,40,083,46,18,17,308,41,20,07,344,39,30,22,228,45,1")
                put("GPGSV,3,3,10,24,40,083,,28,17,308,,1")
                put("GLGSV,2,1,06,65,40,083,46,72,17,308,41,79,07,344,39,80,22,228,45,1")
                put("GLGSV,2,2,06,81,40,083,,88,17,308,,1")
                put("GAGSV,1,1,04,04,40,083,46,09,17,308,41,11,07,344,39,36,22,228,45,7")
                put("GBGSV,1,1,02,19,40,083,,20,17,308,,1")
                put("GNGLL,\(la),\(ns),\(lo),\(ew),\(hms),A,A")
            case .rmc:
                put("GPRMC,\(hms),A,\(la),\(ns),\(lo),\(ew),\(knots),\(course),\(date),,,A")
            case .rtk:
                put("GNGGA,\(hms),\(la),\(ns),\(lo),\(ew),4,24,0.6,\(a),M,47.0,M,1.0,0138")
                put("GNRMC,\(hms),A,\(la),\(ns),\(lo),\(ew),\(knots),\(course),\(date),,,R")
                put("GNGST,\(hms),0.02,0.013,0.010,42.0,0.012,0.011,0.025")
            }
            fixes += 1
            t += step
        }
        fclose(file)
        guard rename(path + ".tmp", path) == 0 else { throw POSIXError(.EIO) }
        return fixes
    }

    static func ddmm(_ value: Double, latitude: Bool) -> (String, String) {
        let v = abs(value)
        let d = Int(v)
        let m = (v - Double(d)) * 60
        let text = latitude ? String(format: "%02d%010.7f", d, m) : String(format: "%03d%010.7f", d, m)
        return (text, latitude ? (value >= 0 ? "N" : "S") : (value >= 0 ? "E" : "W"))
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
