#!/usr/bin/env python3
"""A misbehaving gpsd for tests: it greets each client as gpsd 3.22 does, then sends only part
of a report, never the end of the line.

    fake-gpsd.py PORT drip       a TPV cut short, then one byte every 0.2 s, no newline
    fake-gpsd.py PORT overlong   a TPV cut short after 20 000 bytes, no newline
    fake-gpsd.py PORT long-line  a whole TPV line of 100 000 bytes, then a good TPV every 0.2 s
                                 (times one second apart), each with its newline
    fake-gpsd.py PORT flood [GO] good TPVs, 2 000 a second, 1 ms apart in the receiver's
                                 time, for 10 s; with GO, only once the file GO exists
    fake-gpsd.py PORT notices    gpsd's own notices among three fixes: a DEVICE activated (twice,
                                 as gpsd sends it again with the driver), a line that is not
                                 JSON, an ERROR, a SKY, a PPS, a fix marked simulated
                                 (status 8), the DEVICE deactivated and activated again

It listens on 127.0.0.1:PORT, prints "ready" once listening, and exits after LIFETIME (600 s):
long enough for a test on a loaded machine, which kills it when done.
"""
import os
import socket
import sys
import threading
import time

LIFETIME = 600

VERSION = (
    '{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}\n'
    '{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/fake","activated":"2024-05-01T08:00:00.000Z",'
    '"driver":"NMEA0183","native":0,"bps":4800,"parity":"N","stopbits":1,"cycle":1.00}]}\n'
)


def serve(conn, mode, go=None):
    try:
        conn.sendall(VERSION.encode())
        conn.settimeout(1.0)
        try:
            conn.recv(4096)  # the client's ?WATCH
        except socket.timeout:
            pass
        conn.sendall(b'{"class":"WATCH","enable":true,"json":true}\n')
        if mode == "flood":
            while go is not None and not os.path.exists(go):
                time.sleep(0.02)
            start = time.time()
            n = 0
            while time.time() - start < 10:
                lines = []
                for _ in range(100):
                    n += 1
                    lines.append(
                        '{"class":"TPV","device":"/dev/fake","mode":3,"time":"2024-05-01T08:%02d:%02d.%03dZ",'
                        '"lat":51.5,"lon":%.6f,"altHAE":40.0,"epx":3.0,"epy":3.0,"epv":5.0}\n'
                        % (n // 60000, n // 1000 % 60, n % 1000, -0.12 + n * 1e-6)
                    )
                conn.sendall("".join(lines).encode())
                time.sleep(0.05)
            time.sleep(LIFETIME)
        elif mode == "notices":
            def tpv(second, status=""):
                return (
                    '{"class":"TPV","device":"/dev/fake",%s"mode":3,"time":"2024-05-01T08:00:%02d.000Z",'
                    '"lat":51.5%04d,"lon":-0.1200,"altHAE":40.0,"eph":3.0,"epv":5.0}\n' % (status, second, second)
                )
            active = '{"class":"DEVICE","path":"/dev/fake","activated":"2024-05-01T08:00:00.000Z"%s}\n'
            for line in [
                active % ',"driver":"NMEA0183"',
                active % ',"driver":"u-blox"',
                "this is no JSON\n",
                '{"class":"ERROR","message":"can\'t open /dev/ttyUSB1."}\n',
                '{"class":"SKY","device":"/dev/fake","hdop":0.9}\n',
                '{"class":"PPS","device":"/dev/fake","real_sec":1714550401,"real_nsec":0}\n',
                tpv(1),
                tpv(2, '"status":8,'),
                tpv(3),
                '{"class":"DEVICE","path":"/dev/fake","activated":0}\n',
                active % ',"driver":"u-blox"',
                tpv(4),
            ]:
                conn.sendall(line.encode())
                time.sleep(0.2)
            time.sleep(LIFETIME)
        elif mode == "long-line":
            conn.sendall(b'{"class":"TPV","device":"/dev/fake","mode":3,"tag":"' + b"x" * 100000 + b'"}\n')
            for second in range(1, 200):
                line = (
                    '{"class":"TPV","device":"/dev/fake","mode":3,"time":"2024-05-01T08:%02d:%02d.000Z",'
                    '"ept":0.005,"lat":51.5%04d,"lon":-0.1200,"altHAE":40.0,"epx":3.0,"epy":3.0,"epv":5.0,'
                    '"speed":1.2,"track":90.0}\n' % (second // 60, second % 60, second)
                )
                conn.sendall(line.encode())
                time.sleep(0.2)
            time.sleep(LIFETIME)
        elif mode == "overlong":
            conn.sendall(b'{"class":"TPV","device":"/dev/fake","mode":3,"tag":"' + b"x" * 20000)
            time.sleep(LIFETIME)
        else:
            conn.sendall(b'{"class":"TPV","device":"/dev/fake","mode":3,"lat":4')
            while True:
                time.sleep(0.2)
                conn.sendall(b"1")
    except OSError:
        pass
    finally:
        conn.close()


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    go = sys.argv[3] if len(sys.argv) > 3 else None
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(8)
    print("ready", flush=True)
    threading.Timer(LIFETIME, lambda: sys.exit(0)).start()
    listener.settimeout(LIFETIME)
    end = time.time() + LIFETIME
    while time.time() < end:
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            break
        threading.Thread(target=serve, args=(conn, mode, go), daemon=True).start()


if __name__ == "__main__":
    main()
