"""The hostile repository's attacks on secrets (tools/attacks.py in the repository, assembled in
hostile.py): reading the App's private key, other processes' environments in /proc (and a host
victim's), another job's clone, and the repository's .git/config by every route."""

READS = r'''def read(path):
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return failure(exc)
    return f"read:{len(data)}:{hashlib.sha256(data).hexdigest()[:16]}"


def app_key():
    return read(TARGETS["key_path"])


def proc_environ():
    marker = TARGETS["env_marker"].encode()
    seen = readable = leaked = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        seen += 1
        try:
            data = (entry / "environ").read_bytes()
        except OSError:
            continue
        readable += 1
        leaked += marker in data
    try:
        victim = Path(f"/proc/{TARGETS['victim_pid']}/environ").read_bytes()
        victim_result = "LEAKED" if marker in victim else "clean"
    except OSError as exc:
        victim_result = failure(exc)
    own = "clean"
    for key, value in os.environ.items():
        if marker.decode() in value or TARGETS["token"] in value or "SECRET" in key or "TOKEN" in key:
            own = "LEAKED"
    return f"seen={seen} readable={readable} leaked={leaked} victim={victim_result} own={own}"


def other_clone():
    try:
        listing = f"listed:{len(os.listdir(TARGETS['other_clone']))}"
    except OSError as exc:
        listing = failure(exc)
    return f"file={read(TARGETS['other_secret'])} dir={listing}"


def git_config():
    dotgit = Path.cwd() / ".git"
    parts = [f"direct={read(dotgit / 'config')}"]
    try:
        gitdir = Path(dotgit.read_text().split("gitdir:", 1)[1].strip())
        parts.append(f"common={read(gitdir.parent.parent / 'config')}")
    except (OSError, IndexError) as exc:
        parts.append(f"common={failure(exc)}")
    parts.append(f"absolute={read(TARGETS['git_config'])}")
    return " ".join(parts)'''
