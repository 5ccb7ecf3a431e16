#!/usr/bin/env python3
"""hold_headers.py PORT N SECONDS - N connections to 127.0.0.1:PORT, each
sending a request line and about 6 KB of headers but never the blank line
that ends them, held open: the server keeps each request half-read.
Prints "held N" once all are open, then holds them for SECONDS (or until
SIGTERM) and closes them: bounded either way."""
import socket
import sys
import time

port, n, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
pad = "".join("X-Pad-%02d: %s\r\n" % (i, "a" * 84) for i in range(64))
request = ("GET / HTTP/1.1\r\nHost: localhost\r\n" + pad).encode()
socks = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(request)
    socks.append(s)
print("held %d" % len(socks), flush=True)
time.sleep(secs)
for s in socks:
    s.close()
