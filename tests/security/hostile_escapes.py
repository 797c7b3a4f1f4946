"""The hostile repository's attacks on the sandbox's walls (tools/attacks.py in the repository,
assembled in hostile.py): connecting to host services (redis on loopback) and outside hosts,
writing to the checkout, HOME and the clone, and leaving a daemon that outlives the command."""

ESCAPES = r'''def connect(host, port):
    try:
        with socket.create_connection((host, port), timeout=1):
            return "connected"
    except OSError as exc:
        return failure(exc)


def write(path):
    try:
        Path(path).write_text("pwned by the hostile repository")
    except OSError as exc:
        return failure(exc)
    return "wrote"


def daemon(stage):
    proc = subprocess.Popen(
        [sys.executable, "-c", DAEMON, TARGETS["daemon_tag"], stage], start_new_session=True,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    Path("/tmp", f"hostile-{stage}.pid").write_text(str(proc.pid))
    return f"spawned:{proc.pid}"'''
