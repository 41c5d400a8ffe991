"""Convolution problems in MIOpenDriver's command-line form (docs/policy.md#problem-input).

    [name:] [./bin/]MIOpenDriver conv|convfp16|convbfp16 -n N -c C -H H -W W -k K -y Y -x X
            [-p pad_h] [-q pad_w] [-u stride_h] [-v stride_w] [-l dil_h] [-j dil_w] [-g groups] [-F 1]
            [--in_layout NHWC --fil_layout NHWC --out_layout NHWC]

The long spellings MIOpenDriver accepts (``--batchsize``, ``--in_channels``,
``--in_h``, ``--in_w``, ``--out_channels``, ``--fil_h``, ``--fil_w``,
``--pad_h``, ``--pad_w``, ``--conv_stride_h``, ``--conv_stride_w``,
``--dilation_h``, ``--dilation_w``, ``--group_count``, ``--forw``) work too.
``-n -c -H -W -k -y -x`` are required (MIOpenDriver's own defaults, e.g. a
batch of 100, would silently describe another layer); the others default to
pad 0, stride 1, dilation 1, 1 group. Only the forward direction exists
(``-F 1``; absent means forward); only 2-D (``--spatial_dim 2``: a 3-D layer,
``--spatial_dim 3`` / ``-_ 3`` with its depth flags ``-! -@ -# -$ -% -^`` /
``--in_d`` ..., or a ``conv3d``/``conv3dfp16``/``conv3dbfp16`` command word, is
parsed and refused as 3-D in one line naming the rule, :data:`SPATIAL_RULE`); layouts, when
given, must be NHWC (the kernels' layout; MIOpenDriver's default is NCHW, so
catalogs say NHWC explicitly). ``conv`` is fp32, which the kernels do not
support: it parses (dtype ``fp32``) and the emitter asks for ``--dtype``.
Harmless run flags (``-t -V -i -w -s``) are accepted and ignored. Every error
names the flag or token at fault.

Fused inference lines (issue 36): ``CBAInferfp16`` (fp16) and ``CBAInfer``
(fp32: parses, the emitter asks for ``--dtype``), MIOpenDriver's
convolution + bias + activation driver (driver/CBAInferFusion_driver.hpp),
take the same problem flags (also ``--conv_stride_0/1``), but ``-F`` is the
fusion mode (``--fusion_mode``: cba 4, ca 5, cb 6; the batch-norm modes
cbna 0, cna 1, na 2, cn 3 are refused) and ``-m`` the activation mode
(``--activMode``, miopenActivationMode_t: passthrough 0, relu 3, clipped relu
7 with ``-A`` alpha; the others are refused). They map onto the kernels'
accumulator epilogue: cb -> bias, cba with passthrough -> bias, cba with relu
-> bias_relu, cba with clipped relu -> bias_clamp to [0, alpha] (bias, then the
activation), ca with relu -> relu, ca with clipped relu -> clamp to [0, alpha],
ca with passthrough -> identity. ``-B -G -M -P -i -t -V -w -s`` are accepted and
ignored; ``-z`` must be ``conv``/``default`` and ``-r`` 0 (padding modes
and values the kernels do not take). Layout flags are accepted as for conv
(the kernels' NHWC).

Layer names name output files, so a ``name:`` is letters, digits and
``_ . + -`` without a leading dot (:func:`check_name`; catalogs refuse
others). A command-line layer (:func:`parse_command_line`) gets a safe name:
its ``name:`` made safe, or one derived from its command and flags.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace

from parity.base.escape import shown
from parity.base.input_files import (MAX_CATALOG_BYTES, MAX_CATALOG_LINE_BYTES, InputFileError, check_text,
                                read_text)
from python_engine.facts import ConvProblem

COMMANDS = {"conv": "fp32", "convfp16": "fp16", "convbfp16": "bf16"}
FUSED_COMMANDS = {"CBAInfer": "fp32", "CBAInferfp16": "fp16"}
# MIOpenDriver's fusion modes (driver/CBAInferFusion_driver.hpp fusionMode_t) and activation
# modes (include/miopen/miopen.h miopenActivationMode_t)
FUSION_MODES = {0: "cbna", 1: "cna", 2: "na", 3: "cn", 4: "cba", 5: "ca", 6: "cb"}
ACTIV_MODES = {0: "passthrough", 1: "logistic", 2: "tanh", 3: "relu", 4: "softrelu", 5: "abs", 6: "power",
               7: "clipped relu", 8: "leaky relu", 9: "elu"}
_FUSED_FLAGS = {"--fusion_mode": "-F", "--activMode": "-m", "--alpha": "-A", "--beta": "-B", "--gamma": "-G",
                "--bnMode": "-M", "--pad_mode": "-z", "--pad_val": "-r", "--printconv": "-P",
                "--conv_stride_0": "-u", "--conv_stride_1": "-v"}
_FLAGS = {  # short -> (long, field)
    "-n": ("--batchsize", "N"), "-c": ("--in_channels", "C"), "-H": ("--in_h", "H"), "-W": ("--in_w", "W"),
    "-k": ("--out_channels", "K"), "-y": ("--fil_h", "Y"), "-x": ("--fil_w", "X"),
    "-p": ("--pad_h", "pad_h"), "-q": ("--pad_w", "pad_w"), "-u": ("--conv_stride_h", "stride_h"),
    "-v": ("--conv_stride_w", "stride_w"), "-l": ("--dilation_h", "dil_h"), "-j": ("--dilation_w", "dil_w"),
    "-g": ("--group_count", "groups"), "-F": ("--forw", "F"),
}
# MIOpenDriver's 3-D (``--spatial_dim 3``) flags: short -> long (MIOpenDriver
# conv_driver.hpp AddCmdLineArgs: in_d '!', fil_d '@', conv_stride_d '#',
# pad_d '$', trans_output_pad_d '%', dilation_d '^'). Parsed so that a 3-D
# layer is refused as 3-D, not as an unknown flag.
_DEPTH_FLAGS = {"-!": "--in_d", "-@": "--fil_d", "-#": "--conv_stride_d", "-$": "--pad_d",
                "-%": "--trans_output_pad_d", "-^": "--dilation_d"}
# 3-D command words other tools write for MIOpenDriver lines (MIOpenDriver itself has
# none: its 3-D form is conv|convfp16|convbfp16 --spatial_dim 3, driver/main.cpp's base
# arguments): refused as 3-D, naming MIOpenDriver's spelling, not as an unknown command.
COMMANDS_3D = {"conv3d": "conv", "conv3dfp16": "convfp16", "conv3dbfp16": "convbfp16"}
#: The rule a 3-D problem breaks (issue 37, item 4; docs/policy.md "Departures"): the
#: engines' problem is 2-D, so a 3-D layer is refused here, where it is spelled, and never
#: reaches the split-K policy, whose outcome for it is the reference's degree 1 (not split).
SPATIAL_RULE = ("the kernels and the split-K policy are 2-D (NHWC; ConvProblem has no depth), so a 3-D "
                "problem is not split (degree 1) and no binary runs it")
_LONG = {long: short for short, (long, _) in _FLAGS.items()}
_LONG.update({long: short for short, long in _DEPTH_FLAGS.items()})
_LAYOUTS = ("--in_layout", "--fil_layout", "--out_layout", "-I", "-f", "-O")
_IGNORED = ("-t", "--time", "-V", "--verify", "-i", "--iter", "-w", "--wall", "-s", "--search")
_REQUIRED = ("-n", "-c", "-H", "-W", "-k", "-y", "-x")
_LOWEST = {"pad_h": 0, "pad_w": 0}


class ProblemInputError(ValueError):
    """A malformed or unsupported MIOpenDriver line (the message names the flag)."""


@dataclass(frozen=True)
class Layer:
    name: str
    dtype: str              # bf16 | fp16 | fp32 (MIOpenDriver `conv`, `CBAInfer`)
    problem: ConvProblem
    line: str               # the command as given
    fusion: tuple = ()      # fused lines: (fusion mode, activation mode, alpha); () for conv lines

    @property
    def acc_epilogue(self) -> str:
        """The kernels' accumulator epilogue of a fused line (identity for conv lines)."""
        return fused_epilogue(*self.fusion)[0] if self.fusion else "identity"

    @property
    def scalars(self) -> dict:
        """The epilogue's scalar kernel arguments (clamp: ``clamp_lo`` 0, ``clamp_hi`` alpha)."""
        return fused_epilogue(*self.fusion)[1] if self.fusion else {}

    def command(self) -> str:
        """The canonical MIOpenDriver command of this layer (NHWC, forward)."""
        p = self.problem
        cmds = FUSED_COMMANDS if self.fusion else COMMANDS
        cmd = {v: k for k, v in cmds.items()}[self.dtype]
        tail = "-F 1" if not self.fusion else f"-F {self.fusion[0]} -m {self.fusion[1]} -A {self.fusion[2]!r}"
        return (f"MIOpenDriver {cmd} -n {p.N} -c {p.C} -H {p.H} -W {p.W} -k {p.K} -y {p.Y} -x {p.X} "
                f"-p {p.pad_h} -q {p.pad_w} -u {p.stride_h} -v {p.stride_w} -l {p.dil_h} -j {p.dil_w} "
                f"-g {p.groups} {tail} --in_layout NHWC --fil_layout NHWC --out_layout NHWC")


def fused_epilogue(fusion: int, activ: int, alpha: float) -> tuple:
    """``(acc_epilogue, scalars)`` of a fused line's ``-F`` fusion mode, ``-m``
    activation mode and ``-A`` alpha (see the module docstring). Raises
    ProblemInputError naming the flag and value."""
    if fusion not in FUSION_MODES:
        raise ProblemInputError(f"flag -F {fusion} is not a fusion mode: only cba 4, ca 5, cb 6")
    name = FUSION_MODES[fusion]
    if "n" in name:
        raise ProblemInputError(f"flag -F {fusion} ({name}) is not supported: batch-norm fusion modes are "
                                f"refused; only cba 4, ca 5, cb 6")
    if name == "cb":
        return "bias", {}
    if activ not in (0, 3, 7):
        what = ACTIV_MODES.get(activ, "unknown")
        raise ProblemInputError(f"flag -m {activ} ({what}) is not supported: the activation modes are "
                                f"passthrough 0, relu 3, clipped relu 7")
    bias = "bias_" if name == "cba" else ""   # cba: bias, then the activation (one fused epilogue)
    if activ == 7:
        if not (alpha >= 0.0 and alpha < float("inf")):
            raise ProblemInputError(f"flag -A {alpha!r} (clipped relu alpha) must be a finite value >= 0")
        return bias + "clamp", {"clamp_lo": 0.0, "clamp_hi": float(alpha)}
    if activ == 3:
        return bias + "relu", {}
    return ("bias" if bias else "identity"), {}


def _fused_flag(flag: str, val: str, fused: dict, seen: set) -> bool:
    """Read one fused-line flag into ``fused`` (``F``, ``m``, ``A``); False when
    ``flag`` is not one (a problem flag, read as for conv lines)."""
    short = _FUSED_FLAGS.get(flag, flag)
    if short not in ("-F", "-m", "-A", "-B", "-G", "-M", "-z", "-r", "-P"):
        return False
    _once(seen, short, flag)
    if short in ("-A", "-B", "-G"):
        try:
            x = float(val)
        except ValueError:
            raise ProblemInputError(f"flag {shown(flag)} needs a number, got '{shown(val)}'") from None
        if short == "-A":
            fused["A"] = x
    elif short == "-z":
        if val not in ("conv", "default"):
            raise ProblemInputError(f"flag {shown(flag)} {shown(val)} is not supported: give the padding "
                                    f"with -p and -q (pad mode conv)")
    else:
        v = decimal_int(flag, val)
        if short == "-r" and v != 0:
            raise ProblemInputError(f"flag {shown(flag)} {v} is not supported: the kernels pad with 0")
        if short in ("-F", "-m"):
            fused[short[1]] = v
    return True


NAME_RULE = "letters, digits and _ . + - only, not starting with a dot"
_NAME_RE = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9_.+-]*\Z")


_DECIMAL_RE = re.compile(r"[+-]?[0-9]{1,18}")  # fullmatch: ASCII digits, optional sign, below 10**18


def decimal_int(flag: str, val: str) -> int:
    """The integer a MIOpenDriver flag value spells: ASCII decimal digits with
    an optional sign, nothing else (Python's ``int()`` would also take ``1_024``,
    spaces and non-ASCII digits, which MIOpenDriver reads differently).
    Raises ProblemInputError naming the flag."""
    if not _DECIMAL_RE.fullmatch(val):
        raise ProblemInputError(f"flag {shown(flag)} needs a decimal integer (ASCII digits, optional sign, "
                                f"at most 18 digits), got '{shown(val)}'")
    return int(val, 10)


def check_name(name: str) -> str:
    """``name`` if it is a safe layer name (it names ``<out>/<name>.plan.json``), else ProblemInputError."""
    if not _NAME_RE.match(name):
        raise ProblemInputError(f"layer name '{shown(name)}' is not allowed: a name is {NAME_RULE} "
                                f"(it names the file <name>.plan.json in the output directory)")
    return name


def safe_name(name: str) -> str:
    """``name`` made safe: characters outside [A-Za-z0-9_.+-] become ``_``, leading dots are dropped."""
    out = re.sub(r"[^A-Za-z0-9_.+-]", "_", name).lstrip(".")
    return out or "layer"


def derived_name(dtype: str, p: ConvProblem, cmd: str | None = None) -> str:
    """A name for a layer given without one: the command word and the problem's flags."""
    cmd = cmd or {v: k for k, v in COMMANDS.items()}[dtype]
    return (f"{cmd}_n{p.N}_c{p.C}_H{p.H}_W{p.W}_k{p.K}_y{p.Y}_x{p.X}_p{p.pad_h}_q{p.pad_w}_u{p.stride_h}"
            f"_v{p.stride_w}_l{p.dil_h}_j{p.dil_w}_g{p.groups}")


def split_name(line: str) -> tuple:
    """``(name or None, command text)`` of ``[name:] command``."""
    text = line.strip()
    if ":" in text.split(" ", 1)[0]:
        head, text = text.split(":", 1)
        return head.strip(), text.strip()
    return None, text


def parse_line(line: str, name: str | None = None) -> Layer:
    """One MIOpenDriver command (optionally ``name:`` first). Raises ProblemInputError,
    also for a name that is not safe as a file name (:data:`NAME_RULE`). Without a
    name, the layer is named after its command and flags (:func:`derived_name`)."""
    given, text = split_name(line)
    layer = parse_words(_words(text), line.strip())
    name = name if name is not None else given
    return layer if name is None else replace(layer, name=check_name(name))


def parse_command_line(line: str) -> Layer:
    """A layer given on the command line (``emit COMMAND``, ``run``): like
    :func:`parse_line`, but an unsafe ``name:`` is made safe (:func:`safe_name`)
    instead of refused. Text that is not printable UTF-8 is refused first
    (:func:`parity.base.input_files.check_text`: a byte that was not UTF-8, which
    argv carries as a lone surrogate, a control character but tab and LF, or
    U+2028/U+2029), so the command lands in plan.json as strict JSON."""
    if len(line) > MAX_CATALOG_LINE_BYTES or len(line.encode("utf-8", "surrogateescape")) > MAX_CATALOG_LINE_BYTES:
        raise ProblemInputError(f"the command is longer than {MAX_CATALOG_LINE_BYTES} bytes (a catalog line's limit)")
    try:
        check_text(line, "the command")
    except InputFileError as e:
        raise ProblemInputError(str(e)) from None
    given, text = split_name(line)
    layer = parse_words(_words(text), line.strip())
    return layer if given is None else replace(layer, name=safe_name(given))


def _words(text: str) -> list:
    try:
        return shlex.split(text)
    except ValueError as e:
        raise ProblemInputError(f"cannot split the line into words: {e}") from None


def parse_words(toks: list, line: str | None = None) -> Layer:
    """The words of one MIOpenDriver command (``[MIOpenDriver] conv... flags``), already
    split. The layer is named after its command and flags. Raises ProblemInputError."""
    toks = list(toks)
    line = " ".join(shlex.quote(t) for t in toks) if line is None else line
    if toks and toks[0].rsplit("/", 1)[-1] == "MIOpenDriver":
        toks = toks[1:]
    cmd, fused = _command(toks)
    flags = _FlagReader(fused)
    flags.read(toks)
    flags.check()
    fusion = ()
    if fused is not None:
        fusion = (fused.get("F", 0), fused.get("m", 3), fused.get("A", 1.0))  # MIOpenDriver's defaults
        fused_epilogue(*fusion)
    p = _problem(flags.vals)
    dtype = (FUSED_COMMANDS if fusion else COMMANDS)[cmd]
    name = derived_name(dtype, p, cmd) + (f"_F{fusion[0]}_m{fusion[1]}" if fusion else "")
    return Layer(name, dtype, p, line.strip(), fusion)


def _command(toks: list) -> tuple[str, dict | None]:
    """(command, {} for a fused command's values or None) of the words after ``MIOpenDriver``;
    ProblemInputError for none, a 3-D or an unsupported command."""
    if not toks:
        raise ProblemInputError("empty command: expected conv, convfp16 or convbfp16")
    cmd = toks[0]
    if cmd in COMMANDS_3D:
        raise ProblemInputError(f"command '{cmd}' is a 3-D convolution, which is not supported: "
                                f"{SPATIAL_RULE}; MIOpenDriver spells 3-D as "
                                f"{COMMANDS_3D[cmd]} --spatial_dim 3 (-_ 3), refused the same way")
    fused = {} if cmd in FUSED_COMMANDS else None
    if cmd not in COMMANDS and fused is None:
        raise ProblemInputError(f"command '{shown(cmd)}' is not supported: expected conv, convfp16 or convbfp16"
                                + (" (only forward convolutions)" if cmd.startswith(("gemm", "pool", "bnorm"))
                                   else ""))
    return cmd, fused


class _FlagReader:
    """The flags of one command: the problem's values (``vals``, by short flag), the 3-D
    depth flags (``depth``, refused by :meth:`check`), ``--spatial_dim`` and, for a fused
    command, its values (``fused``, filled by :func:`_fused_flag`)."""

    def __init__(self, fused: dict | None):
        self.fused = fused
        self.vals: dict = {}
        self.depth: dict = {}
        self.spatial = 2
        self.seen: set = set()  # the other valued flags (layouts, --spatial_dim, --mode), each given once

    def read(self, toks: list) -> None:
        """Every ``flag value`` pair after the command (``--flag=value`` split in two)."""
        i = 1
        while i < len(toks):
            flag = toks[i]
            if "=" in flag and flag.startswith("--"):
                flag, val = flag.split("=", 1)
                toks[i:i + 1] = [flag, val]
            if i + 1 >= len(toks):
                raise ProblemInputError(f"flag {shown(flag)} has no value")
            val = toks[i + 1]
            if self.fused is not None and _fused_flag(flag, val, self.fused, self.seen):
                pass
            elif self.fused is not None and flag in _FUSED_FLAGS:  # --conv_stride_0 / _1
                toks[i] = _FUSED_FLAGS[flag]
                continue
            else:
                self._conv_flag(flag, val)
            i += 2

    def _conv_flag(self, flag: str, val: str) -> None:
        """One flag of a plain convolution command (or a fused one's convolution part)."""
        short = _LONG.get(flag, flag)
        if short in _FLAGS:
            v = decimal_int(flag, val)
            field = _FLAGS[short][1]
            if short in self.vals:
                raise ProblemInputError(f"flag {shown(flag)} is given twice")
            lo = _LOWEST.get(field, 1) if field != "F" else 0
            if v < lo:
                raise ProblemInputError(f"flag {shown(flag)} ({field}) must be >= {lo}, got {v}")
            self.vals[short] = v
        elif flag in _LAYOUTS:
            _once(self.seen, _LAYOUT_KEY[flag], flag)
            if val != "NHWC":
                raise ProblemInputError(f"flag {shown(flag)} {shown(val)} is not supported: the kernels take NHWC "
                                        f"input, KYXC (NHWC) weights and NHWK output")
        elif short in _DEPTH_FLAGS:
            if short in self.depth:
                raise ProblemInputError(f"flag {shown(flag)} is given twice")
            self.depth[short] = decimal_int(flag, val)
        elif flag in ("--spatial_dim", "-_"):
            _once(self.seen, "--spatial_dim", flag)
            if val not in ("2", "3"):
                raise ProblemInputError(f"flag {shown(flag)} {shown(val)} is not supported: only 2-D convolutions")
            self.spatial = int(val)
        elif flag in ("--mode", "-m"):
            _once(self.seen, "--mode", flag)
            if val != "conv":
                raise ProblemInputError(f"flag {shown(flag)} {shown(val)} is not supported: only mode conv (not trans)")
        elif flag not in _IGNORED:
            raise ProblemInputError(f"unknown flag {shown(flag)}")

    def check(self) -> None:
        """ProblemInputError for a 3-D convolution, a depth flag, a missing required flag or -F != 1."""
        if self.spatial == 3:
            given = ", ".join(f"{f} {v}" for f, v in self.depth.items())
            raise ProblemInputError("a 3-D convolution (--spatial_dim 3" + (f"; depth flags {given}" if given else "")
                                    + f") is not supported: {SPATIAL_RULE}; only --spatial_dim 2")
        if self.depth:
            f0 = next(iter(self.depth))
            raise ProblemInputError(f"flag {shown(f0)} ({_DEPTH_FLAGS[f0]}) is a 3-D flag: it needs --spatial_dim 3, "
                                    f"and 3-D convolutions are not supported (only 2-D)")
        missing = [f for f in _REQUIRED if f not in self.vals]
        if missing:
            raise ProblemInputError(f"missing flag {missing[0]} ({_FLAGS[missing[0]][0]}); "
                                    f"-n -c -H -W -k -y -x are required")
        if self.vals.get("-F", 1) != 1:
            raise ProblemInputError(f"flag -F {self.vals['-F']} is not supported: only -F 1 (forward)")


def _problem(vals: dict) -> ConvProblem:
    """The ConvProblem of the flags' values; ProblemInputError when -g does not divide -c and -k
    or the (dilated) filter does not fit the padded input."""
    kw = {_FLAGS[s][1]: v for s, v in vals.items() if s != "-F"}
    g = kw.get("groups", 1)
    if kw["C"] % g or kw["K"] % g:
        raise ProblemInputError(f"flag -g {g} must divide -c {kw['C']} and -k {kw['K']}")
    p = ConvProblem(**kw)
    if p.Ho < 1 or p.Wo < 1 or p.dil_h * (p.Y - 1) + 1 > p.H + 2 * p.pad_h \
            or p.dil_w * (p.X - 1) + 1 > p.W + 2 * p.pad_w:
        raise ProblemInputError(f"flags -y {p.Y} -x {p.X} (dilated by -l {p.dil_h} -j {p.dil_w}) do not fit "
                                f"the padded input -H {p.H} -W {p.W} with -p {p.pad_h} -q {p.pad_w}")
    return p


def read_catalog(path, max_bytes: int = MAX_CATALOG_BYTES) -> list:
    """The layers of the catalog file ``path`` (:func:`parse_catalog`), read
    by :func:`parity.base.input_files.read_text`: a regular file (checked before
    open: a FIFO, device or directory is refused), at most
    ``max_bytes`` (default :data:`~parity.base.input_files.MAX_CATALOG_BYTES`) bytes, lines of at most
    :data:`~parity.base.input_files.MAX_CATALOG_LINE_BYTES` bytes, strict UTF-8
    without control characters or line separators. Raises ProblemInputError
    (one line naming the file)."""
    try:
        text = read_text(path, "catalog", max_bytes, MAX_CATALOG_LINE_BYTES)
    except InputFileError as e:
        raise ProblemInputError(str(e)) from None
    return parse_catalog(text, shown(str(path)))


_LAYOUT_KEY = {"--in_layout": "-I", "-I": "-I", "--fil_layout": "-f", "-f": "-f", "--out_layout": "-O", "-O": "-O"}


def _once(seen: set, key: str, flag: str) -> None:
    """ProblemInputError when the flag ``key`` (its short or long spelling
    ``flag``) was given before in this command, as for a repeated ``-n``."""
    if key in seen:
        raise ProblemInputError(f"flag {shown(flag)} is given twice")
    seen.add(key)


def parse_catalog(text: str, source: str = "<catalog>") -> list:
    """Layers of a catalog: one command per line (``name: command``), ``#``
    comments and blank lines skipped. Errors say ``<source>:<line>: ...``."""
    out, names = [], set()
    for n, raw in enumerate(text.splitlines(), 1):
        s = raw.split("#", 1)[0].strip()
        if not s:
            continue
        try:
            given, _ = split_name(s)
            layer = parse_line(s, None if given is not None else f"line{n}")
        except ProblemInputError as e:
            raise ProblemInputError(f"{source}:{n}: {e}") from None
        if layer.name in names:
            raise ProblemInputError(f"{source}:{n}: layer name '{shown(layer.name)}' is used twice")
        names.add(layer.name)
        out.append(layer)
    return out
