#!/usr/bin/env python3
"""Regenerate the sample traces in traces/ (written for Waymark; deterministic).

  city-walk.gpx      a 40-minute walk through a made-up street grid, 5 s fixes with elevation,
                     heart rate and a pause that splits the track into two segments
  drive-tunnel.gpx   a 12-minute drive at 1 Hz with a 90 s tunnel: no fixes while inside,
                     so the track has a gap between two segments
  xcode-route.gpx    Xcode-style waypoints (the simulator's format): a few <wpt> with times
"""
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "traces")
random.seed(7)


def iso(t):
    h, rem = divmod(t, 3600)
    m, s = divmod(rem, 60)
    return f"2024-05-01T{8 + h:02d}:{m:02d}:{s:02d}Z"


def header(name, creator="Waymark sample traces", extra=""):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<gpx version="1.1" creator="{creator}" xmlns="http://www.topografix.com/GPX/1/1"{extra}>\n'
            f'  <metadata><name>{name}</name><time>{iso(0)}</time></metadata>\n')


def walk():
    tpx = ' xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1"'
    out = [header("City walk", extra=tpx)]
    out.append('  <wpt lat="48.137200" lon="11.575500"><ele>519</ele><name>Start: town square</name><sym>Flag</sym></wpt>\n')
    out.append('  <wpt lat="48.142100" lon="11.584300"><ele>514</ele><name>Café</name><sym>Restaurant</sym></wpt>\n')
    out.append("  <trk><name>City walk</name><type>walking</type>\n    <trkseg>\n")
    lat, lon, t, ele = 48.1372, 11.5755, 0, 519.0
    legs = [(0, 1, 60), (1, 0, 50), (0, 1, 40), (-1, 0, 30), (0, -1, 70), (1, 0, 40), (0, 1, 30), (-1, 0, 40)]
    hr = 95
    for i, (dlat, dlon, steps) in enumerate(legs):
        for _ in range(steps):
            lat += dlat * 0.000045 + random.uniform(-0.000004, 0.000004)
            lon += dlon * 0.000068 + random.uniform(-0.000004, 0.000004)
            ele += random.uniform(-0.4, 0.45)
            hr = max(80, min(140, hr + random.randint(-3, 3)))
            out.append(f'      <trkpt lat="{lat:.6f}" lon="{lon:.6f}"><ele>{ele:.1f}</ele><time>{iso(t)}</time>'
                       f'<extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>{hr}</gpxtpx:hr>'
                       f'</gpxtpx:TrackPointExtension></extensions></trkpt>\n')
            t += 5
        if i == 3:  # a coffee break: the watch was paused, a new segment starts
            t += 600
            out.append("    </trkseg>\n    <trkseg>\n")
    out.append("    </trkseg>\n  </trk>\n</gpx>\n")
    return "".join(out)


def drive():
    out = [header("Drive through the tunnel")]
    out.append("  <trk><name>Drive with tunnel gap</name><type>driving</type>\n    <trkseg>\n")
    lat, lon, t, heading, speed = 47.2650, 11.3930, 0, 60.0, 0.0
    for second in range(720):
        speed = min(27.0, speed + 1.5) if second < 600 else max(0.0, speed - 2.0)
        heading += math.sin(second / 40.0) * 0.8
        dn = math.cos(math.radians(heading)) * speed
        de = math.sin(math.radians(heading)) * speed
        lat += dn / 111_320
        lon += de / (111_320 * math.cos(math.radians(lat)))
        in_tunnel = 300 <= second < 390
        if second == 300:
            out.append("    </trkseg>\n    <trkseg>\n")
        if in_tunnel:
            continue
        sat = 4 if 390 <= second < 400 else 9
        hdop = 3.5 if 390 <= second < 400 else 0.9
        out.append(f'      <trkpt lat="{lat:.7f}" lon="{lon:.7f}"><ele>{574 + 20 * math.sin(second / 90):.1f}</ele>'
                   f'<time>{iso(t + second)}</time><sat>{sat}</sat><hdop>{hdop}</hdop></trkpt>\n')
    out.append("    </trkseg>\n  </trk>\n</gpx>\n")
    return "".join(out)


def xcode():
    # Xcode's location simulation format: waypoints, optionally with times, nothing else.
    points = [(37.331705, -122.030237, "Infinite Loop"), (37.332400, -122.031900, None),
              (37.334600, -122.032700, None), (37.336700, -122.030800, "Stevens Creek"),
              (37.337000, -122.027400, None), (37.334900, -122.009100, "De Anza")]
    out = ['<?xml version="1.0"?>\n<gpx version="1.1" creator="Xcode">\n']
    for i, (lat, lon, name) in enumerate(points):
        out.append(f'    <wpt lat="{lat}" lon="{lon}">\n')
        if name:
            out.append(f"        <name>{name}</name>\n")
        out.append(f"        <time>2024-05-01T08:{i:02d}:00Z</time>\n    </wpt>\n")
    out.append("</gpx>\n")
    return "".join(out)


os.makedirs(OUT, exist_ok=True)
for name, text in (("city-walk.gpx", walk()), ("drive-tunnel.gpx", drive()), ("xcode-route.gpx", xcode())):
    with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote traces/" + name)
