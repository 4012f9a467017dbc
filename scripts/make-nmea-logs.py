#!/usr/bin/env python3
"""Writes the project's own NMEA 0183 receiver logs (Tests/WaymarkTests/Fixtures/nmea), for the
live-path tests when ../shared is absent. Deterministic: run it again and the files come out the
same.

- walk.nmea: 60 s at 1 Hz, GGA + GSA + RMC per epoch: 40 s of 3D fixes, 10 s of 2D fixes
  (GSA mode 2, no altitude), 10 s without a fix (GGA quality 0, RMC status V).
- garbled.nmea: the same walk with damage mixed in: bad checksums, truncated sentences, binary
  garbage, overlong lines, impossible values with good checksums.
"""
import math, os, random

OUT = os.path.join(os.path.dirname(__file__), "..", "Tests", "WaymarkTests", "Fixtures", "nmea")
LAT0, LON0 = 48.137, 11.575


def sentence(body):
    c = 0
    for ch in body.encode():
        c ^= ch
    return f"${body}*{c:02X}\r\n"


def ddmm(value, lat):
    hemi = ("N" if value >= 0 else "S") if lat else ("E" if value >= 0 else "W")
    v = abs(value)
    d = int(v)
    m = (v - d) * 60
    return (f"{d:02d}{m:07.4f}" if lat else f"{d:03d}{m:07.4f}"), hemi


def epoch(t, lat, lon, mode):
    hh, mm, ss = 8, t // 60, t % 60
    stamp = f"{hh:02d}{mm:02d}{ss:02d}.00"
    la, ns = ddmm(lat, True)
    lo, ew = ddmm(lon, False)
    out = []
    if mode == 3:
        out.append(sentence(f"GPGGA,{stamp},{la},{ns},{lo},{ew},1,08,0.9,520.0,M,47.0,M,,"))
        out.append(sentence("GPGSA,A,3,01,03,06,11,14,17,19,22,,,,,1.6,0.9,1.3"))
        out.append(sentence(f"GPRMC,{stamp},A,{la},{ns},{lo},{ew},2.72,90.0,010524,,,A"))
    elif mode == 2:
        out.append(sentence(f"GPGGA,{stamp},{la},{ns},{lo},{ew},1,03,2.5,,M,,M,,"))
        out.append(sentence("GPGSA,A,2,01,03,06,,,,,,,,,,2.7,2.5,1.0"))
        out.append(sentence(f"GPRMC,{stamp},A,{la},{ns},{lo},{ew},2.72,90.0,010524,,,A"))
    else:
        out.append(sentence(f"GPGGA,{stamp},,,,,0,00,99.9,,M,,M,,"))
        out.append(sentence("GPGSA,A,1,,,,,,,,,,,,,99.9,99.9,99.9"))
        out.append(sentence(f"GPRMC,{stamp},V,,,,,,,010524,,,N"))
    return out


def walk():
    lines = []
    for t in range(60):
        lat = LAT0
        lon = LON0 + 1.4 * t / (111_195 * math.cos(math.radians(LAT0)))
        mode = 3 if t < 40 else (2 if t < 50 else 1)
        lines += epoch(t, lat, lon, mode)
    return lines


lines = walk()
with open(os.path.join(OUT, "walk.nmea"), "w", newline="") as f:
    f.writelines(lines)

rng = random.Random(1)
damaged = []
for i, line in enumerate(lines):
    damaged.append(line)
    if i % 7 == 3:
        body = line[1:line.index("*")]
        damaged.append(f"${body}*00\r\n" if not line.endswith("*00\r\n") else f"${body}*01\r\n")  # bad checksum
    if i % 11 == 5:
        damaged.append(line[: len(line) // 2] + "\r\n")  # truncated
    if i % 13 == 7:
        damaged.append("".join(chr(rng.randrange(33, 127)) for _ in range(40)) + "\r\n")  # garbage
    if i % 17 == 9:
        damaged.append("$GPGGA," + "9" * 300 + "\r\n")  # overlong
    if i % 19 == 11:
        # impossible values with a good checksum: latitude 95°, a date in month 13
        damaged.append(sentence("GPGGA,080000.00,9500.0000,N,01134.5000,E,1,08,0.9,520.0,M,47.0,M,,"))
        damaged.append(sentence("GPRMC,080000.00,A,9500.0000,N,01134.5000,E,2.72,90.0,011324,,,A"))
with open(os.path.join(OUT, "garbled.nmea"), "w", newline="") as f:
    f.writelines(damaged)
