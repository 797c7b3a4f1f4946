"""Runs inside the sandbox: serves the egress proxy's Unix socket on the namespace's loopback.

    python3 -I -S egress_forward.py SOCKET PORT -- PROGRAM [ARGS...]

Listens on 127.0.0.1:PORT of the sandbox's own network namespace (its only interface), forwards
each connection byte for byte to SOCKET (Stepwise's egress proxy, bound in from the host), runs
PROGRAM with `HTTPS_PROXY` pointing here and exits with its exit code. It uses the standard
library only and holds no secret: code in the sandbox that replaces it gains nothing, because
every connection still ends at the proxy, which decides. Not imported by Stepwise itself.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            target.sendall(chunk)
    except OSError:
        pass
    finally:
        for sock in (target, source):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _serve_one(client: socket.socket, socket_path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(socket_path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
    back.start()
    _pipe(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _accept(listener: socket.socket, socket_path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_serve_one, args=(client, socket_path), daemon=True).start()


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: egress_forward.py SOCKET PORT -- PROGRAM [ARGS...]\n")
        return 2
    socket_path, port, program = argv[0], int(argv[1]), argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    threading.Thread(target=_accept, args=(listener, socket_path), daemon=True).start()
    try:
        child = subprocess.Popen(program)
    except OSError as exc:
        sys.stderr.write(f"bwrap: execvp {program[0]}: {exc.strerror}\n")
        return 127
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda number, _frame: child.send_signal(number))
    code = child.wait()
    listener.close()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main(sys.argv[1:]))
