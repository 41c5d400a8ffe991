"""Which CI lanes shard I of N runs (`.ci/run --shard I/N`, docs/ci.md "Sharding").

    python3 .ci/shard.py I/N          the lane names of shard I, one a line
    python3 .ci/shard.py --plan N     every shard's lanes and planned seconds

The lanes and their seconds are `.ci/lane_costs.tsv`. Placement `every` (set-up) runs on
every shard, `split` runs its 1/N part on every shard (pytest's files are dealt by
tests/durations_plugin.py), `with:LANE` on LANE's shard; the `one` lanes are dealt longest
first (ties by name) to the shard with the least planned seconds so far (ties: the lower
shard), so every machine computes the same plan and each `one` lane runs exactly once.
Bad input: one `error:` line, exit 2. Standard library only (runs before the venv exists).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

TABLE = Path(__file__).with_name("lane_costs.tsv")


class ShardError(ValueError):
    pass


def read_table(path: Path = TABLE) -> dict:
    """``{lane: (seconds, placement)}`` in file order."""
    out = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise ShardError(f"{path.name}:{n}: expected LANE<TAB>SECONDS<TAB>PLACEMENT")
        lane, secs, place = parts
        try:
            cost = float(secs)
        except ValueError:
            raise ShardError(f"{path.name}:{n}: seconds {secs!r} is not a number") from None
        if place not in ("every", "split", "one") and not place.startswith("with:"):
            raise ShardError(f"{path.name}:{n}: placement {place!r} is not every, split, one or with:LANE")
        out[lane] = (cost, place)
    for lane, (_, place) in out.items():
        if place.startswith("with:") and out.get(place[5:], (0, ""))[1] != "one":
            raise ShardError(f"{path.name}: {lane}: {place} must name a `one` lane")
    return out


#: The most shards (the same bound as `parity check --shard`, parity/aot/shard.py MAX_SHARDS).
MAX_SHARDS = 1000


def parse_shard(text: str) -> tuple:
    """``"I/N"`` -> ``(I, N)`` with ``1 <= I <= N <= 1000``: the rules of ``parity check --shard``
    (parity/aot/shard.py): ASCII digits, no spaces or signs, at most 18 digits each."""
    m = re.fullmatch(r"([0-9]{1,18})/([0-9]{1,18})", text)
    if not m:
        raise ShardError(f"--shard: expected I/N in ASCII digits (e.g. 1/2), got {ascii(text)}")
    i, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= i <= n:
        raise ShardError(f"--shard: I/N needs 1 <= I <= N, got {ascii(text)}")
    if n > MAX_SHARDS:  # 1/99999999 planned 10**8 loads (a hang), 1/10**23 an OverflowError
        raise ShardError(f"--shard: I/N needs N <= {MAX_SHARDS}, got {ascii(text)}")
    return i, n


def plan(table: dict, n: int) -> list:
    """``n`` pairs ``(lanes, planned seconds)``, lanes in the table's (= .ci/run's) order."""
    load = [0.0] * n
    home = {}
    for lane, (cost, place) in table.items():
        if place in ("every", "split"):
            for k in range(n):
                load[k] += cost if place == "every" else cost / n
    ones = sorted((lane for lane, (_, p) in table.items() if p == "one"),
                  key=lambda lane: (-table[lane][0], lane))
    for lane in ones:
        k = min(range(n), key=lambda j: (load[j], j))
        home[lane] = k
        load[k] += table[lane][0]
    for lane, (cost, place) in table.items():
        if place.startswith("with:"):
            home[lane] = home[place[5:]]
            load[home[lane]] += cost
    out = []
    for k in range(n):
        lanes = [lane for lane, (_, p) in table.items() if p in ("every", "split") or home.get(lane) == k]
        out.append((lanes, load[k]))
    return out


def main(argv: list) -> int:
    try:
        table = read_table()
        if len(argv) == 2 and argv[0] == "--plan":
            try:
                n = parse_shard(f"1/{argv[1]}")[1]
            except ShardError:
                raise ShardError(f"--plan N needs N from 1 to {MAX_SHARDS} in ASCII digits, got {ascii(argv[1])}") from None
            for k, (lanes, secs) in enumerate(plan(table, n), 1):
                print(f"shard {k}/{n}: {secs:.0f} s planned: {' '.join(lanes)}")
            return 0
        if len(argv) != 1:
            raise ShardError("usage: shard.py I/N | --plan N")
        i, n = parse_shard(argv[0])
        print("\n".join(plan(table, n)[i - 1][0]))
        return 0
    except (ShardError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
