import ArgumentParser
import Waymark

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

extension WaymarkCommand {
    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print statistics of a trace (GPX, NMEA, gpsd JSON).",
            discussion: """
                Counts, time span, geodesic length in 2D and 3D (WGS 84, summed within track \
                segments), moving time (pairs of points faster than 1 km/h), maximum and average \
                speed, climb and descent, and bounds.

                --json prints one object with trackCount, segmentCount, trackPointCount, \
                waypointCount, routeCount, routePointCount, length2D and length3D (metres), \
                routeLength2D, duration (seconds, or null without times), movingTime, \
                movingDistance, maxSpeed and averageSpeed (m/s), climb, descent, minElevation, \
                maxElevation, startTime, endTime, bounds (every point) and trackBounds (track \
                points only), each with minLatitude, minLongitude, maxLatitude, maxLongitude.

                Examples:
                  waymark info walk.gpx
                  waymark info walk.gpx --json | jq .length2D
                """)

        @Argument(
            help:
                "The trace to read, told by its content: GPX, TCX, KML, GeoJSON, FIT, CSV, an NMEA log or a gpsd JSON capture; - reads standard input."
        )
        var trace: String

        @Flag(help: "Print one JSON object instead of text.")
        var json = false

        @OptionGroup var read: ReadOptions

        func run() throws {
            do {
                let reader = try makeReader(trace, options: read, keepingExtensions: false)
                var stats = TraceStatistics()
                let take: (consuming GPXEvent) -> Void = { event in
                    if event.isWarning, case .warning(let w) = event { report(w) }
                    stats.add(event)
                }
                try reader.readEventsAhead(take)
                let sink = FileSink.standardOutput()
                if json {
                    sink.write(stats.jsonString() + "\n")
                } else {
                    sink.write(TextRenderer.summary(of: stats, name: nil, title: trace == "-" ? "" : trace))
                }
                try sink.commit()
                reportDropped(reader)
            } catch {
                throw sysexit(for: error)
            }
        }
    }
}
