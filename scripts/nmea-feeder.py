#!/usr/bin/env python3
"""A receiver on a TCP port, for gpsd to read (gpsd ... tcp://127.0.0.1:PORT).

usage: feeder.py PORT LOG [--rate EPOCHS_PER_SECOND] [--silence-after SECONDS] [--loop]
                          [--wait-for FILE]

It sends LOG one epoch at a time (an epoch starts at each GGA sentence), at --rate epochs a
second (default 10), to whoever connects, one client at a time; a client that reconnects (a
restarted gpsd) continues where the last one stopped. With --silence-after it stops sending
after that many seconds but keeps the connection open, like a receiver that went quiet. With
--wait-for it sends nothing until FILE exists (the test creates it once its client watches).
Written for Waymark's tests and its record benchmark.
"""
import os, socket, sys, time


def main():
    port, log = int(sys.argv[1]), sys.argv[2]
    rate, silence, loop, wait_for = 10.0, None, False, None
    args = sys.argv[3:]
    while args:
        a = args.pop(0)
        if a == "--rate":
            rate = float(args.pop(0))
        elif a == "--silence-after":
            silence = float(args.pop(0))
        elif a == "--loop":
            loop = True
        elif a == "--wait-for":
            wait_for = args.pop(0)
    data = open(log, "rb").read().split(b"\n")
    epochs, current = [], []
    for line in data:
        if not line:
            continue
        if line.startswith(b"$GPGGA") and current:
            epochs.append(b"\n".join(current) + b"\n")
            current = []
        current.append(line)
    if current:
        epochs.append(b"\n".join(current) + b"\n")
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(1)
    start = None
    index = 0
    while True:
        client, _ = server.accept()
        try:
            while True:
                if start is None:
                    if wait_for is not None and not os.path.exists(wait_for):
                        time.sleep(0.02)
                        continue
                    start = time.monotonic()
                if silence is not None and time.monotonic() - start >= silence:
                    time.sleep(0.1)
                    client.send(b"")  # keep quiet, keep the connection
                    continue
                if index >= len(epochs):
                    if not loop:
                        time.sleep(0.1)
                        continue
                    index = 0
                client.sendall(epochs[index])
                index += 1
                time.sleep(1.0 / rate)
        except OSError:
            client.close()


main()
