"""``--scheduler``: the heavy lanes on a Dask cluster give the local run's results
(parity/gate/executor.py, docs/scale.md), on a 2-worker LocalCluster."""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from parity.app.main import main as parity_main
from parity.gate import executor as X

distributed = pytest.importorskip("distributed", reason="distributed (the [distributed] extra) is not installed")
pytest.importorskip("llvmlite", reason="llvmlite (the [test] extra) compiles the IR")


@pytest.fixture(scope="module")
def address():
    # the workers inherit the parent's checked build (no rebuild of cpp_engine on import)
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as lc:
        yield lc.scheduler_address


@pytest.fixture(scope="module")
def cluster(address):
    c = X.open_cluster(address)
    yield c
    c.close()


def _content(path: Path) -> dict:
    """A manifest without its timings (the build block and each job's build_seconds)."""
    doc = json.loads(path.read_text())
    doc.pop("build")
    for e in doc["jobs"]:
        e.pop("build_seconds")
    return doc


def test_aot_build_shard_matches_local(address, tmp_path, capsys):
    from runtime_helpers import linker_or_skip
    linker_or_skip()
    local, dist = tmp_path / "local", tmp_path / "dist"
    common = ["aot", "--flavor", "llvm23", "--shard", "1/400", "--no-progress"]
    assert parity_main(common + ["--build", str(local), "--jobs", "2"]) == 0
    assert parity_main(common + ["--build", str(dist), "--scheduler", address]) == 0
    a, b = _content(local / "manifest.json"), _content(dist / "manifest.json")
    assert len(a["jobs"]) >= 5
    assert a == b
    for e in b["jobs"]:  # the parent wrote the bytes the workers built
        data = (dist / e["code_object"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == e["code_object_sha256"]
    assert json.loads((dist / "manifest.json").read_text())["build"]["workers"] == 2


def test_mutate_verdicts_match_local(cluster):
    from parity.mutate import run as R
    from parity.sim import numerics as N
    configs = N.accepted_configs(["conv_fwd_split_k_reduce"])[:3]
    jobs = R.plan(configs, 3, per_kind=1)[:5]
    local = R.to_json(R.report(R.run(jobs)), 3, None)
    dist = R.to_json(R.report(R.run(jobs, cluster=cluster)), 3, None)
    assert [(v["config"], v["kind"], v["line"], v["status"], v["oracle"]) for v in dist["verdicts"]] == \
        [(v["config"], v["kind"], v["line"], v["status"], v["oracle"]) for v in local["verdicts"]]
    assert dist == local
    assert dist["mutants"] == 5


def test_numerics_match_local(cluster):
    from parity.sim import numerics as N
    names = {("conv_fwd_split_k_reduce", "bf16_v1_t64_d0"), ("conv_fwd_split_k_reduce", "bf16_v1_t64_d1")}
    local = N.run_all(["conv_fwd_split_k_reduce"], 1, select=names)
    seen = []
    dist = N.run_all(["conv_fwd_split_k_reduce"], 1, select=names, cluster=cluster,
                     progress=lambda o, done, total: seen.append((done, total)))
    strip = lambda o: {k: v for k, v in vars(o).items() if k != "seconds"}  # noqa: E731
    assert [strip(o) for o in dist] == [strip(o) for o in local]
    assert [o.config for o in dist] == ["bf16_v1_t64_d0", "bf16_v1_t64_d1"]  # catalog order
    assert all(o.ok and o.cases > 0 for o in dist)
    assert seen == [(1, 2), (2, 2)]


def _square_dying_once(job):
    """Square ``i``; job 3 kills its own worker process the first time (marked by a file).
    Every run of a job leaves a file, so a rerun is visible."""
    marker, runs, i = job
    Path(runs, f"{i}.{os.getpid()}.{len(os.listdir(runs))}").touch()
    if i == 3 and not os.path.exists(marker):
        Path(marker).touch()
        os._exit(1)
    return i * i


def test_lost_worker_jobs_rerun_once(cluster, tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    marker = str(tmp_path / "died")
    got = []
    out = cluster.map(_square_dying_once, [(marker, str(runs), i) for i in range(12)], name="test",
                      on_crash=lambda job, msg: pytest.fail(f"job {job[2]} reported as crashed: {msg}"),
                      on_result=lambda i, v: got.append(i))
    assert out == [i * i for i in range(12)]  # job order, none lost
    assert sorted(got) == list(range(12))  # each counted once
    assert os.path.exists(marker)
    assert sum(1 for f in os.listdir(runs) if f.startswith("3.")) == 2  # job 3 ran again elsewhere


def test_repeated_crash_is_the_lanes_crash_result(cluster, tmp_path):
    out = cluster.map(_square_dying_once, [(str(tmp_path / "never"), str(tmp_path), 0)], name="test",
                      on_crash=lambda job, msg: ("crash", msg))
    assert out == [0]
    out = cluster.map(int, ["7", "x"], name="test", on_crash=lambda job, msg: ("crash", msg))
    assert out[0] == 7
    assert out[1][0] == "crash" and out[1][1].startswith("ValueError: invalid literal")


def _square_or_hang(i):
    """Square ``i``; job 1 hangs (far past the test's job_timeout)."""
    if i == 1:
        import time
        time.sleep(120)
    return i * i


def test_a_job_past_its_timeout_is_the_crash_result_and_its_worker_restarts(cluster):
    import time
    t0 = time.monotonic()
    got = []
    out = cluster.map(_square_or_hang, list(range(6)), name="test", job_timeout=3,
                      on_crash=lambda job, msg: ("crash", msg), on_result=lambda i, v: got.append(i))
    assert time.monotonic() - t0 < 60  # not the 120 s of the hung job
    assert out[1][0] == "crash" and out[1][1].startswith("JobTimeout: timeout: no result after 3s"), out[1]
    assert "worker restarted" in out[1][1]
    assert [out[i] for i in (0, 2, 3, 4, 5)] == [0, 4, 9, 16, 25]  # the others, in job order
    assert sorted(got) == list(range(6))  # each counted once (a job rerun after the restart too)
    cluster.client.wait_for_workers(2, timeout=60)  # the nanny started a fresh worker
    assert cluster.map(_square_or_hang, [5], name="test", job_timeout=3, on_crash=lambda j, m: m) == [25]


def test_guarded_timeout_outside_a_worker_leaves_the_process_alone():
    import time
    with pytest.raises(X.JobTimeout, match=r"no result after 0.2s .*worker left running"):
        X._guarded(X.fingerprint(), time.sleep, 5, 0.2)
    assert X._guarded(X.fingerprint(), abs, -3, 5) == 3
    with pytest.raises(ValueError, match="invalid literal"):
        X._guarded(X.fingerprint(), int, "x", 5)  # the job's own exception, not a timeout


def test_fuzz_and_verify_match_local(address, tmp_path, capsys):
    base = ["fuzz", "--specs", "24", "--seed", "5", "--only", "conv_fwd_split_k_reduce"]
    assert parity_main(base + ["--jobs", "2", "--out", str(tmp_path / "a")]) == 0
    local = capsys.readouterr().out.splitlines()
    assert parity_main(base + ["--out", str(tmp_path / "b"), "--scheduler", address]) == 0
    dist = capsys.readouterr().out.splitlines()
    assert local[0] == dist[0] and "IDENTICAL=" in dist[0]
    assert dist[-1] == "RESULT: GREEN"
    ver = ["verify", "--only", "conv_fwd_split_k_reduce/bf16_v1_t64_d0"]
    assert parity_main(ver + ["--jobs", "2"]) == 0
    local = capsys.readouterr().out
    assert parity_main(ver + ["--scheduler", address]) == 0
    assert capsys.readouterr().out == local


def test_env_variable_and_flag(monkeypatch):
    monkeypatch.setenv(X.ENV, "tcp://from-env:8786")
    assert X.scheduler_address(None) == "tcp://from-env:8786"
    assert X.scheduler_address("tcp://flag:1") == "tcp://flag:1"  # the flag wins
    assert X.scheduler_address("local") is None  # --scheduler local: the local pool
    assert X.scheduler_address("") is None  # (an empty flag is refused by the parser)
    monkeypatch.delenv(X.ENV)
    assert X.scheduler_address(None) is None


@pytest.mark.parametrize("address, says", [
    ("tcp://127.0.0.1:1", "cannot connect to 127.0.0.1:1 within"),
    ("nonsense://x", "not a Dask scheduler address (unknown scheme 'nonsense'"),
    ("tcp://127.0.0.1", "not a Dask scheduler address"),
])
def test_bad_address_is_one_error_line(address, says, capsys, tmp_path):
    rc = parity_main(["mutate", "--max-mutants", "1", "--scheduler", address])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and err[0].startswith(f"error: --scheduler {address}: ") and says in err[0]


def test_aot_scheduler_needs_build(capsys):
    assert parity_main(["aot", "--flavor", "llvm23", "--check", "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert capsys.readouterr().err.strip() == "error: --scheduler needs --build DIR (listing, --emit and " \
        "--check run in one process)"


def test_env_address_is_used(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv(X.ENV, "tcp://127.0.0.1:1")
    assert parity_main(["numerics", "--only", "conv_fwd_split_k_reduce/bf16_v1_t64_d0"]) == 2
    # named as the variable (the user typed no --scheduler; tests/test_break_brk.py)
    assert ("error: PARITY_SCHEDULER=tcp://127.0.0.1:1 (from the environment; --scheduler overrides it): "
            "cannot connect") in capsys.readouterr().err


def test_missing_extra_names_it(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    rc = parity_main(["aot", "--flavor", "llvm23", "--build", str(tmp_path), "--shard", "1/400",
                      "--scheduler", "tcp://127.0.0.1:8786"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert err == ["error: --scheduler needs Dask: pip install 'splitk-parity[distributed]' "
                   "(or pip install -e '.[distributed]' in the checkout; docs/scale.md)"]


def test_worker_of_another_checkout_is_refused(cluster, monkeypatch):
    monkeypatch.setattr(cluster, "expected", ("/elsewhere/.venv",) + cluster.expected[1:])
    with pytest.raises(X.SchedulerError, match="start the workers with this checkout's .venv"):
        cluster.check_workers()
    with pytest.raises(X.SchedulerError, match=r"runs parity from .* not this checkout's"):
        cluster.map(int, ["1"], name="test", on_crash=lambda job, msg: None)


def test_a_server_that_is_no_dask_scheduler_is_named_so(capsys):
    """A port that accepts TCP and answers garbage (a web server, say): one line that says the
    peer does not speak Dask's protocol, not the decoder's MemoryError/ValueError text."""
    import socket
    import threading
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    stop = threading.Event()

    def serve():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                try:
                    conn.sendall(b"\xff" * 64 + b"HTTP/1.0 200 OK\r\n\r\n" * 8)
                except OSError:
                    pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    address = f"tcp://127.0.0.1:{srv.getsockname()[1]}"
    try:
        rc = parity_main(["numerics", "--only", "conv_fwd_split_k_reduce/bf16_v1_t64_d0", "--scheduler", address])
    finally:
        stop.set()
        t.join()
        srv.close()
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and err[0].startswith(f"error: --scheduler {address}: ")
    assert "does not speak Dask's protocol" in err[0], err[0]
    assert "MemoryError" not in err[0]
