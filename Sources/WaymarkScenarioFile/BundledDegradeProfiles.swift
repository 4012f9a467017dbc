// The bundled degradation profiles: the text of profiles/degrade/*.yaml, which
// DegradeProfileTests checks is the same byte for byte (edit the files, then copy them here).

extension DegradeProfileFile {
    static let bundled: [String: String] = [
        "forest": #"""
        # Forest: wet canopy over the antenna. Waymark degradation profile.
        name: forest
        description: Under a canopy; weaker signals, long episodes of mild multipath.
        noise: {sigma: 4, tau: 90}
        multipath: {sigma: 5, tau: 30, bias: 6, every: 400, lasting: 120, reportedFraction: 0.6}
        altitude: {sigma: 10, tau: 90}
        satellites: {mean: 7, sigma: 2, tau: 120, minimum: 4, hdop: 1.5}
        """#,
        "indoor-edge": #"""
        # Indoor edge: by a window, in a doorway. Waymark degradation profile.
        name: indoor-edge
        description: At the edge of a building; a slow first fix, drift while standing, jumps and outages.
        coldStart: 30
        noise: {sigma: 8, tau: 30}
        drift: {sigma: 10, tau: 180, belowSpeed: 0.5}
        outages: {every: 180, lasting: 40}
        jumps: {every: 600, distance: 80, lasting: 8, reportedAccuracy: 20}
        altitude: {sigma: 20, tau: 60}
        satellites: {mean: 5, sigma: 1.5, tau: 60, minimum: 4, hdop: 3.0}
        """#,
        "open-sky": #"""
        # Open sky: a good receiver in a field. Waymark degradation profile (docs/degrade.md).
        name: open-sky
        description: A clear view of the sky; the error a modern receiver has at its best.
        noise: {sigma: 1.5, tau: 60}          # metres per axis (95% ≈ 3.7 m), seconds
        altitude: {sigma: 3, tau: 60}         # vertical about twice the horizontal
        satellites: {mean: 10, sigma: 1.5, tau: 300, minimum: 4, hdop: 0.8}
        """#,
        "phone-in-pocket": #"""
        # Phone in a pocket: a body between the antenna and the sky. Waymark degradation profile.
        name: phone-in-pocket
        description: A phone in a pocket; a 30 s cold start, a fix every 5 s with bursts, late and repeated timestamps.
        coldStart: 30
        noise: {sigma: 4, tau: 45}
        altitude: {sigma: 12, tau: 60}
        rate: {interval: 5, burstEvery: 600, burstLasting: 30}
        clock: {repeats: 0.01, late: 0.01, by: 1}
        """#,
        "suburb": #"""
        # Suburb: houses and trees, now and then a reflection. Waymark degradation profile.
        name: suburb
        description: Low buildings and trees; short multipath episodes.
        noise: {sigma: 3, tau: 60}
        multipath: {sigma: 4, tau: 15, bias: 8, every: 300, lasting: 30, reportedFraction: 0.5}
        altitude: {sigma: 6, tau: 60}
        satellites: {mean: 8, sigma: 2, tau: 180, minimum: 4, hdop: 1.1}
        clock: {repeats: 0.002}
        """#,
        "tunnel-city": #"""
        # Tunnel city: a city with underpasses and tunnels. Waymark degradation profile.
        name: tunnel-city
        description: An urban canyon with tunnels and parking garages; minute-long outages.
        noise: {sigma: 5, tau: 30}
        multipath: {sigma: 8, tau: 20, bias: 25, every: 180, lasting: 45, reportedFraction: 0.4}
        outages: {every: 300, lasting: 60}
        jumps: {every: 1200, distance: 100, lasting: 5, reportedAccuracy: 15}
        altitude: {sigma: 20, tau: 60}
        satellites: {mean: 6, sigma: 2, tau: 60, minimum: 4, hdop: 2.0}
        """#,
        "urban-canyon": #"""
        # Urban canyon: tall buildings both sides. Waymark degradation profile.
        name: urban-canyon
        description: Streets between tall buildings; fixes pulled tens of metres sideways for a minute, jumps and short outages.
        noise: {sigma: 5, tau: 30}
        multipath: {sigma: 10, tau: 20, bias: 30, every: 120, lasting: 60, reportedFraction: 0.4}
        outages: {every: 600, lasting: 20}
        jumps: {every: 900, distance: 150, lasting: 5, reportedAccuracy: 12}
        altitude: {sigma: 25, tau: 60}        # vertical error ten times the horizontal noise at its worst
        satellites: {mean: 6, sigma: 2, tau: 60, minimum: 4, hdop: 2.0}
        clock: {repeats: 0.005, backward: 0.002, by: 1}
        """#,
    ]
}
