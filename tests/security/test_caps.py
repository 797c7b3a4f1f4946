"""Everything Stepwise stores or keeps from untrusted code is capped (jobs/inputs/caps.py):
each cap is fed 100 times what it allows."""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

import pytest

from jobs.adapters.egress import EgressProxy
from jobs.adapters.sandbox import PlainSandbox, SandboxPolicy
from jobs.adapters.sandbox_process import OutputSink
from jobs.adapters.staging import collect_changes
from jobs.inputs import caps
from tests.jobs.adapters.test_egress import connect

TOKEN = "ghs_" + "a" * 36


def test_egress_records_keep_the_cap_and_count_the_rest_redacted() -> None:
    flood = [f"{TOKEN}.example:{n} refused: " + "x" * 10_000 for n in range(100 * caps.EGRESS_RECORDS)]
    kept = caps.egress_records(flood, dropped=7)
    assert len(kept) == caps.EGRESS_RECORDS + 1
    assert all(len(record) <= caps.EGRESS_RECORD_CHARS for record in kept)
    assert not any(TOKEN in record for record in kept)
    assert kept[-1] == f"... and {99 * caps.EGRESS_RECORDS + 7:,} more tunnels not recorded"


def test_the_proxy_keeps_no_more_records_than_the_cap() -> None:
    with EgressProxy(["example.org"]) as proxy:
        for number in range(100 * caps.EGRESS_RECORDS):
            with socket.socket(socket.AF_UNIX) as sock:
                sock.connect(str(proxy.socket_path))
                sock.sendall(f"CONNECT h{number}.invalid:443 HTTP/1.1\r\n\r\n".encode())
                assert sock.recv(64).startswith(b"HTTP/1.1 403")
        assert connect(proxy, "last.invalid:443").startswith(b"HTTP/1.1 403")
    assert len(proxy.records) == caps.EGRESS_RECORDS
    assert proxy.dropped == 100 * caps.EGRESS_RECORDS + 1 - caps.EGRESS_RECORDS


def test_output_is_streamed_and_only_its_tail_is_kept() -> None:
    read_end, write_end = os.pipe()
    sink = OutputSink(read_end)
    peak = 0
    line = b"y" * 1023 + b"\n"
    with os.fdopen(write_end, "wb", buffering=0) as pipe:
        for _ in range(100 * caps.OUTPUT_KEPT_BYTES // len(line)):
            pipe.write(line)
            peak = max(peak, len(sink._kept))
    kept, lines, dropped = sink.finish()
    assert len(kept) == caps.OUTPUT_KEPT_BYTES and dropped
    assert lines == 100 * caps.OUTPUT_KEPT_BYTES // len(line)
    assert peak <= 2 * caps.OUTPUT_KEPT_BYTES + len(line)


def test_a_command_flooding_its_output_spools_nothing_to_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_spool(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("command output was spooled to a temporary file")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_spool)
    size = 100 * caps.OUTPUT_KEPT_BYTES
    code = f"import sys; sys.stdout.write(('z' * 99 + '\\n') * ({size} // 100)); print('end')"
    result = PlainSandbox().run(["python3", "-c", code], cwd=tmp_path,
                                policy=SandboxPolicy(allow_commands=("python3",), timeout=60))
    assert result.exit_code == 0
    assert result.output_lines == size // 100 + 1
    assert result.output_tail.endswith("z" * 99 + "\nend")
    # A failed attempt's log keeps the head and the tail, capped, and says what it left out.
    log = result.output_log
    assert len(log) <= caps.OUTPUT_HEAD_BYTES + caps.OUTPUT_KEPT_BYTES + 100
    assert log.startswith("z" * 99 + "\n") and log.endswith("z" * 99 + "\nend\n")
    left_out = size + 4 - caps.OUTPUT_HEAD_BYTES - caps.OUTPUT_KEPT_BYTES
    assert f"[… {left_out:,} bytes of output left out …]" in log


def _sparse(path: Path, size: int) -> None:
    with path.open("wb") as handle:
        handle.truncate(size)  # no block is written: the file costs no disk


def test_a_huge_sparse_file_fails_the_batch_without_being_read(tmp_path: Path) -> None:
    _sparse(tmp_path / "big.bin", 100 * caps.STAGED_FILE_BYTES)
    (tmp_path / "small.py").write_text("ok\n")
    with pytest.raises(caps.FileTooLargeError) as caught:
        collect_changes(tmp_path, ["small.py", "big.bin"])
    message = caught.value.message
    assert "`big.bin`" in message and f"{caps.STAGED_FILE_BYTES:,} bytes per file" in message
    assert "exclude" in (caught.value.hint or "")


def test_many_files_within_the_file_cap_fail_at_the_batch_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(caps, "STAGED_BATCH_BYTES", 1024 * 1024)
    for number in range(100):  # each exactly the batch's cap: 100 times the cap in all
        _sparse(tmp_path / f"part{number:03}.bin", caps.STAGED_BATCH_BYTES)
    names = sorted(os.listdir(tmp_path))
    with pytest.raises(caps.FileTooLargeError, match="per batch") as caught:
        collect_changes(tmp_path, names)
    assert caught.value.evidence["path"] == names[1]  # the second one no longer fits


def test_idle_connections_to_the_proxy_are_capped() -> None:
    held = []
    with EgressProxy(["example.org"]) as proxy:
        try:
            for _ in range(caps.EGRESS_CONNECTIONS):  # each sends nothing and stays open
                sock = socket.socket(socket.AF_UNIX)
                sock.connect(str(proxy.socket_path))
                held.append(sock)
            assert connect(proxy, "example.org:443").startswith(b"HTTP/1.1 503")
        finally:
            for sock in held:
                sock.close()


def test_an_idle_tunnel_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from jobs.adapters import egress

    monkeypatch.setattr(caps, "EGRESS_IDLE_S", 0.3)

    async def tunnel() -> float:
        inside, outside = socket.socketpair()
        reader, writer = await asyncio.open_unix_connection(sock=inside)
        started = asyncio.get_running_loop().time()
        await asyncio.wait_for(egress._pipe(reader, writer), 5)
        outside.close()
        return asyncio.get_running_loop().time() - started

    assert asyncio.run(tunnel()) < 2
