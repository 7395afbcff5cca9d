#!/usr/bin/env python3
"""GET /healthz of a fresh `vigil serve` while N connections are held open (half silent, half
stopped in the middle of a request head): docs/benchmarks.md, "Fleet service under hostile
clients".  Usage: perf/serve_probe.py path/to/vigil"""
import os, resource, socket, subprocess, sys, tempfile, time

resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
binary = sys.argv[1]
work = tempfile.mkdtemp()
port_file = os.path.join(work, "port")
with open(os.path.join(work, "tok"), "w") as f:
    f.write("t")
server = subprocess.Popen(
    [binary, "serve", "--db", os.path.join(work, "db"), "--listen", "127.0.0.1:0", "--port-file",
     port_file, "--token-file", os.path.join(work, "tok")], stderr=subprocess.DEVNULL)
while not os.path.exists(port_file):
    time.sleep(0.05)
port = int(open(port_file).read())


def healthz(timeout=5):
    t0 = time.time()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answer = s.recv(100)[:12].decode(errors="replace")
        s.close()
    except OSError as e:
        answer = type(e).__name__
    return answer, round((time.time() - t0) * 1000, 1)


for n in [0, 32, 500]:
    held = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
    for i, s in enumerate(held):
        if i % 2:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127")
    time.sleep(0.3)
    print(f"{n} connections held: {healthz()}")
    for s in held:
        s.close()
    time.sleep(0.5)
server.terminate()
server.wait()
