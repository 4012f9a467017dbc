#!/usr/bin/env python3
"""Writes the small GPX traces the scenario tests replay (Tests/WaymarkTests/Fixtures/scenarios/traces).

Deterministic: run it again and the files come out the same. The traces are synthetic, made for
the rules they exercise; each file says how in its <desc>.
"""
import math, os

OUT = os.path.join(os.path.dirname(__file__), "..", "Tests", "WaymarkTests", "Fixtures", "scenarios", "traces")
START = 1714550400  # 2024-05-01T08:00:00Z
LAT0, LON0 = 48.137, 11.575  # Munich
M_PER_DEG = 111_195.0


def stamp(t):
    h, rem = divmod(int(t), 3600)
    m, s = divmod(rem, 60)
    d, h = divmod(8 + h, 24)
    return f"2024-05-{1 + d:02d}T{h:02d}:{m:02d}:{s:02d}Z"


def offset(east, north):
    lat = LAT0 + north / M_PER_DEG
    lon = LON0 + east / (M_PER_DEG * math.cos(math.radians(LAT0)))
    return lat, lon


def write(name, desc, segments, extra=None):
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<gpx version="1.1" creator="waymark make-test-traces.py" xmlns="http://www.topografix.com/GPX/1/1">',
             f'  <metadata><desc>{desc}</desc></metadata>', '  <trk><name>' + name + '</name>']
    for seg in segments:
        lines.append('    <trkseg>')
        for (t, lat, lon, fix) in seg:
            body = f'<ele>520</ele><time>{stamp(t)}</time>'
            if fix:
                body += f'<fix>{fix}</fix>'
            lines.append(f'      <trkpt lat="{lat:.7f}" lon="{lon:.7f}">{body}</trkpt>')
        lines.append('    </trkseg>')
    lines += ['  </trk>', '</gpx>', '']
    with open(os.path.join(OUT, name + '.gpx'), 'w') as f:
        f.write('\n'.join(lines))


# A walk due east at 1.4 m/s, a fix every 10 s for 10 minutes (61 fixes, 840 m).
walk = [(t, *offset(1.4 * t, 0), None) for t in range(0, 601, 10)]
write('walk', 'A walk due east at 1.4 m/s, a fix every 10 s for 10 minutes.', [walk])

# Two hours at 1 m/s, a fix every minute (121 fixes): for fetch and task budgets.
long = [(t, *offset(1.0 * t, 0), None) for t in range(0, 7201, 60)]
write('long', 'Two hours due east at 1 m/s, a fix a minute.', [long])

# Walk 2 min, stand 15 min (jitter within 4 m), walk 5 min; a fix every 30 s.
stop = []
for t in range(0, 1321, 30):
    if t <= 120:
        e = 1.4 * t
    elif t <= 1020:
        e = 168 + 3 * math.sin(t / 45.0)
    else:
        e = 168 + 1.4 * (t - 1020)
    stop.append((t, *offset(e, 0), None))
write('stop', 'Walk 2 minutes, stand still 15 minutes, walk 5 minutes; a fix every 30 s.', [stop])

# A drive north at 15 m/s with a fix every 5 s for 10 minutes (121 fixes, 9 km): for the coarse
# accuracy tiers and their intervals.
drive = [(t, *offset(0, 15.0 * t), None) for t in range(0, 601, 5)]
write('drive', 'A drive due north at 15 m/s, a fix every 5 s for 10 minutes.', [drive])

# A walk with a gap (a second segment) and two points without a fix.
gap = [(t, *offset(1.4 * t, 0), 'none' if t in (30, 40) else None) for t in range(0, 61, 10)]
gap2 = [(t, *offset(1.4 * t, 0), None) for t in range(120, 181, 10)]
write('nofix', 'A walk with two fixless points and a gap of a minute between two segments.', [gap, gap2])
