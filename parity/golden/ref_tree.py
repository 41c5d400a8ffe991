"""A git ref's own Python engine, run on its own tree: the REF side of
``parity diff --base REF`` (parity/golden/ir_diff.py) and ``parity perf --base REF``
(parity/perf/build.py).

:func:`resolve_ref` names the commit, :func:`extract` writes its tree
(``git archive``) into a directory, and :func:`lower_at_ref` extracts it into
a temporary directory and runs :data:`REF_SCRIPT` there in a subprocess: the
editable install's import redirection switched off (its finder dropped,
``SKBUILD_EDITABLE_SKIP`` set, ``PYTHONPATH`` cleared), so only REF's
``python_engine`` (and for the ``configs`` request REF's ``parity.configs``)
is imported. Two requests:

* ``{"kind": "configs", "only", "flavors", "want"}``: every config REF knows
  of the families ``only`` (None: all) at ``flavors``; each ``ok`` outcome has
  its sha256, and its text only where ``want`` (sha256 by
  FAMILY/CONFIG@FLAVOR) differs. Answer ``{"families", "units"}``.
* ``{"kind": "units", "units": [{"key", "family", "spec", "arch",
  "flavor"}]}``: the given specs (the working tree's) lowered by REF's
  engine, with their texts. Answer ``{"units"}``.

An outcome is ``{"status": "ok", "kernel", ...}``, ``{"status": "rejected",
"reason"}`` or ``{"status": "crash", "error"}``. A ref that is not a commit,
an engine that cannot be imported or a crashed subprocess is one
:class:`BaseError` line.
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

#: Runs in a subprocess with the working directory at the extracted REF tree.
#: argv: request JSON path, answer JSON path. Imports only REF's modules.
REF_SCRIPT = r'''
import hashlib, json, os, sys, traceback
sys.meta_path[:] = [f for f in sys.meta_path if "ScikitBuild" not in type(f).__name__]
root = os.getcwd()
sys.path.insert(0, root)
for m in list(sys.modules):
    if m.split(".")[0] in ("parity", "python_engine"):
        del sys.modules[m]
req = json.load(open(sys.argv[1]))
try:
    import python_engine as E
    if req["kind"] == "configs":
        from parity.config import load_families
        fams = load_families()
except Exception as exc:
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    if isinstance(exc, SyntaxError) and exc.filename:  # a conflict marker: name the file and line
        last = os.path.relpath(exc.filename, root) + ":" + str(exc.lineno) + ": " + str(exc.msg)
    json.dump({"error": last}, open(sys.argv[2], "w"))
    sys.exit(0)
if not os.path.abspath(E.__file__).startswith(root):
    json.dump({"error": "python_engine was imported from " + E.__file__ + ", not from the ref"}, open(sys.argv[2], "w"))
    sys.exit(0)

def lower(family, spec, arch, flavor, want_sha=None):
    try:
        r = E.lower(family, spec, arch, flavor)
    except Exception as exc:
        if type(exc).__name__ == "SpecRejected":
            return {"status": "rejected", "reason": str(getattr(exc, "reason", exc))}
        first = (str(exc).splitlines() or [""])[0]
        return {"status": "crash", "error": type(exc).__name__ + (": " + first if first else "")}
    if req["kind"] != "configs":
        return {"status": "ok", "kernel": r.kernel, "text": r.text}
    o = {"status": "ok", "sha256": hashlib.sha256(r.text.encode("utf-8")).hexdigest(), "kernel": r.kernel}
    if want_sha != o["sha256"]:
        o["text"] = r.text
    return o

units = {}
if req["kind"] == "configs":
    for fam in fams:
        if req["only"] is not None and fam.name not in req["only"]:
            continue
        for cfg in fam.configs:
            for fl in req["flavors"]:
                if cfg.applies(fl):
                    key = fam.name + "/" + cfg.name + "@" + fl
                    units[key] = lower(fam.name, dict(cfg.spec), cfg.arch, fl, req["want"].get(key))
    json.dump({"families": [f.name for f in fams], "units": units}, open(sys.argv[2], "w"))
else:
    for u in req["units"]:
        units[u["key"]] = lower(u["family"], u["spec"], u["arch"], u["flavor"])
    json.dump({"units": units}, open(sys.argv[2], "w"))
'''


class BaseError(Exception):
    """One line: the ref cannot be compared."""


def _git(root: Path, *args: str, binary: bool = False):
    r = subprocess.run(["git", *args], cwd=root, capture_output=True, text=not binary)
    if r.returncode:
        err = r.stderr.decode(errors="replace") if binary else r.stderr
        raise BaseError(f"git {' '.join(args)}: {(err.strip().splitlines() or ['failed'])[-1]}")
    return r.stdout


def resolve_ref(root: Path, ref: str) -> str:
    """The commit id of ``ref`` in the repository at ``root``."""
    if ref.startswith("-"):
        raise BaseError(f"--base {ref}: not a git ref")
    try:
        return _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
    except BaseError:
        raise BaseError(f"--base {ref}: not a commit in the git repository at {root} "
                        "(try a branch, a tag or HEAD~1)") from None


def extract(root: Path, commit: str, dest: Path) -> None:
    """The tree of ``commit`` written under ``dest`` (git archive)."""
    data = _git(root, "archive", "--format=tar", commit, binary=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        try:
            tar.extractall(dest, filter="data")
        except TypeError:  # Python < 3.12 without extraction filters
            tar.extractall(dest)


def run_ref_script(tree: Path, request: dict, ref: str) -> dict:
    """:data:`REF_SCRIPT`'s answer to ``request`` (see the module docstring) in the REF tree
    extracted at ``tree``. Raises :class:`BaseError` when REF's engine crashes or cannot be imported."""
    with tempfile.TemporaryDirectory(prefix="parity-ref-io-") as io_dir:
        req, ans = Path(io_dir) / "req.json", Path(io_dir) / "ans.json"
        req.write_text(json.dumps(request))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["SKBUILD_EDITABLE_SKIP"] = os.pathsep.join([env.get("SKBUILD_EDITABLE_SKIP", ""), "1"])
        r = subprocess.run([sys.executable, "-c", REF_SCRIPT, str(req), str(ans)], cwd=tree, env=env,
                           capture_output=True, text=True)
        if r.returncode or not ans.exists():
            last = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
            raise BaseError(f"the Python engine at {ref} crashed while lowering: {last}")
        doc = json.loads(ans.read_text())
    if "error" in doc:
        raise BaseError(f"the Python engine at {ref} cannot be imported: {doc['error']}")
    return doc


def lower_at_ref(root: Path, commit: str, ref: str, request: dict) -> dict:
    """:func:`run_ref_script` on the tree of ``commit`` (``ref`` as the user named it, for the
    messages), extracted from the repository at ``root`` into a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="parity-ref-tree-") as tmp:
        extract(root, commit, Path(tmp))
        return run_ref_script(Path(tmp), request, ref)
