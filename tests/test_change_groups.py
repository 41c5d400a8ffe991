"""Change groups (parity/golden/change_groups.py) and the markdown review page (parity/golden/diff_page.py):
normalisation, grouping keys, config patterns, group ids."""

from parity.golden import change_groups as C
from parity.golden import ir_diff as D
from parity.golden.diff_page import markdown_page

STORE = ("  %out5 = fptrunc <8 x float> %sum4 to <8 x bfloat>\n"
         "  %pd6 = getelementptr inbounds bfloat, ptr addrspace(1) %d_ptr, i64 %elem3\n"
         "  store <8 x bfloat> %out5, ptr addrspace(1) %pd6, align 16\n"
         "  ret void\n")


def variant(text, dtype="bfloat", width=8, align=16, first=5):
    t = text.replace("bfloat", dtype).replace("<8 x", f"<{width} x").replace("align 16", f"align {align}")
    return t.replace("%out5", f"%out{first}")


def test_types_shared_by_a_changed_line_are_context_not_change():
    g = C.Grouper("f")
    for name, dt, w, al, n in (("a", "bfloat", 8, 16, 5), ("b", "half", 8, 16, 9), ("c", "bfloat", 4, 8, 5),
                               ("d", "half", 4, 8, 7)):
        old = variant(STORE, dt, w, al, n)
        g.add_text(name, "llvm23", old, old.replace(f"align {al}", "align 2"))
    groups = g.groups()
    # 16 -> 2 and 8 -> 2 are two changes; bfloat/half and the SSA numbers are not part of either
    groups.sort(key=lambda x: sorted(x.entries))
    assert [sorted(x.entries) for x in groups] == [[("a", "llvm23"), ("b", "llvm23")],
                                                   [("c", "llvm23"), ("d", "llvm23")]]
    # operands and literals both lines hold in the same place are context too
    assert groups[0].key == (("-  store T %_, ptr addrspace(N) %_, align 16",
                              "+  store T %_, ptr addrspace(N) %_, align 2"),)
    # the hunk shown is the first entry's, numbers dropped, context kept
    assert groups[0].hunks[0][2] == "-  store <8 x bfloat> %out#, ptr addrspace(1) %pd#, align 16"
    assert groups[0].hunks[0][0] == "   %out# = fptrunc <8 x float> %sum# to <8 x bfloat>"


def test_a_changed_type_stays_in_the_key_and_ignore_types_merges_widths():
    g = C.Grouper("f")
    g.add_text("a", "llvm23", STORE, STORE.replace("store <8 x bfloat>", "store <8 x half>"))
    g.add_text("b", "llvm23", STORE, STORE.replace("store <8 x bfloat>", "store <8 x i16>"))
    assert len(g.groups()) == 2  # bfloat -> half and bfloat -> i16 are different changes
    plain, loose = C.Grouper("f"), C.Grouper("f", ignore_types=True)
    for gr in (plain, loose):
        gr.add_text("v8", "llvm23", STORE, STORE + "  fence\n")
        w4 = variant(STORE, width=4, align=8)
        gr.add_text("v4", "llvm23", w4, w4 + "  fence\n")
    assert len(plain.groups()) == 1  # an added line with no type differs in nothing else
    g2, g3 = C.Grouper("f"), C.Grouper("f", ignore_types=True)
    for gr in (g2, g3):
        gr.add_text("v8", "llvm23", "x\n", "x\n  %y1 = load <8 x float>, ptr %p0\n")
        gr.add_text("v4", "llvm23", "x\n", "x\n  %y1 = load <4 x float>, ptr %p0\n")
    assert len(g2.groups()) == 2 and len(g3.groups()) == 1


def test_renumbered_and_other_kinds_and_stable_ids():
    g = C.Grouper("f")
    g.add_text("r", "llvm20", STORE, STORE.replace("%out5", "%out6"))
    g.add_other(C.ADDED, "lowers (k)", "n", "llvm23")
    g.add_other(C.ADDED, "lowers (k)", "n", "llvm22")
    g.add_text("t", "llvm20", STORE, STORE.replace("align 16", "align 2"))
    kinds = [x.kind for x in g.groups()]
    assert kinds == [C.TEXT, C.RENUMBERED, C.ADDED]
    ids = [x.gid for x in g.groups()]
    g2 = C.Grouper("f")
    g2.add_text("other", "llvm23", STORE, STORE.replace("align 16", "align 2"))
    assert g2.groups()[0].gid == ids[0] and ids[0].startswith("f:") and len(set(ids)) == 3
    assert g.groups()[2].title() == "added: lowers (k): 2 entries: n@{llvm22,llvm23}"


def test_one_inserted_instruction_is_one_hunk_even_in_an_unrolled_loop():
    body = "".join(f"  %off{3 * i + 1} = add i64 %off{3 * i}, %mk0\n  %slab{3 * i + 2} = load float, ptr %p, align 4\n"
                   for i in range(6))
    old = "entry0:\n" + body
    new = "entry0:\n  %probe1 = or i32 %wg0, %wg0\n" + "".join(
        f"  %off{3 * i + 2} = add i64 %off{3 * i + 1}, %mk0\n  %slab{3 * i + 3} = load float, ptr %p, align 4\n"
        for i in range(6))
    [h] = C.hunks(old, new, normalise=True)
    assert [x for x in h if x[0] in "+-"] == ["+  %probe# = or i32 %wg#, %wg#"]
    # an align change in every copy of an unrolled body: each copy's load, nothing else
    hs = C.hunks(body, body.replace("align 4", "align 8"), normalise=True)
    changed = [x for h in hs for x in h if x[0] in "+-"]
    assert changed == ["-  %slab# = load float, ptr %p, align 4", "+  %slab# = load float, ptr %p, align 8"] * 6


def test_configs_are_listed_in_full_or_as_exact_patterns():
    few = [("bf16_v8_d4", fl) for fl in ("llvm20", "llvm22", "llvm23")] + [("x", "llvm23")]
    assert C.entries_text(few) == "bf16_v8_d4@{llvm20,llvm22,llvm23}, x@llvm23"
    many = [(f"{dt}_v{v}_t{t}_d{d}", fl) for dt in ("bf16", "fp16") for v in (2, 8) for t in (64, 256)
            for d in (0, 16, 2) for fl in ("llvm20", "llvm22", "llvm23")]
    many += [("t1024_bf16_v8_d4", "llvm23")]
    assert C.entries_text(many) == ("{bf16,fp16}_v{2,8}_t{64,256}_d{0,2,16}@{llvm20,llvm22,llvm23}, "
                                    "t1024_bf16_v8_d4@llvm23")
    # not a full product: the pattern covers exactly the names given
    part = [(n, "llvm23") for n in ("a_1", "a_2", "b_1", "c_3", "c_4", "d_5", "d_6", "e_7")]
    text = C.entries_text(part)
    assert text == "a_{1,2}@llvm23, b_1@llvm23, c_{3,4}@llvm23, d_{5,6}@llvm23, e_7@llvm23"


def test_markdown_page_shows_groups_configs_and_the_ir_change():
    work = {"f/a@llvm23": {"status": "ok", "sha256": "1", "text": STORE.replace("align 16", "align 2")},
            "f/new@llvm23": {"status": "ok", "sha256": "3", "kernel": "k", "text": "x"}}
    ref = {"f/a@llvm23": {"status": "ok", "sha256": "2", "text": STORE}}
    diffs = D.compare(work, ref, ["f"], ["f"])
    page = markdown_page(diffs, "main", "0123456789abcdef", ("llvm23",), None)
    lines = page.splitlines()
    assert lines[0] == "## IR changes from `main` (0123456789ab) to this tree"
    assert "| f | llvm23 | 1 | 1 | 0 | 0 |" in lines
    assert "```diff" in lines and "-  store <8 x bfloat> %out#, ptr addrspace(1) %pd#, align 16" in lines
    assert "+  store <8 x bfloat> %out#, ptr addrspace(1) %pd#, align 2" in lines
    assert any(l.startswith("**group 2/2**") and "added: lowers (k): 1 entry: new@llvm23" in l for l in lines)
    assert lines[-1] == "groups: 2, entries: 2"
    verdicts = {diffs["f"].groups[0].gid: [], diffs["f"].groups[1].gid: ["new@llvm23: validity oracle: bad"]}
    page = markdown_page(diffs, "main", "0123456789abcdef", ("llvm23",), verdicts)
    assert "✅ oracles: PASS (validity and numerics)" in page
    assert "❌ oracles: FAIL (1): new@llvm23: validity oracle: bad" in page


def test_text_report_puts_each_groups_verdict_under_its_header():
    work = {"f/a@llvm23": {"status": "ok", "sha256": "1", "text": STORE.replace("align 16", "align 2")}}
    ref = {"f/a@llvm23": {"status": "ok", "sha256": "2", "text": STORE}}
    diffs = D.compare(work, ref, ["f"], ["f"])
    [g] = diffs["f"].groups
    lines = D.report_lines(diffs, "HEAD", "0" * 40, ("llvm23",), stat=False, color=False,
                           verdicts={g.gid: ["a@llvm23: numerics oracle: wrong"]})
    i = next(k for k, l in enumerate(lines) if l.startswith("  @@ group 1/1"))
    assert lines[i + 1] == "    oracles: FAIL (1): a@llvm23: numerics oracle: wrong"
    assert lines[i + 2] == "     %out# = fptrunc <8 x float> %sum# to <8 x bfloat>"
    assert lines[-1] == "groups: 1, entries: 1"


def test_group_verdicts_run_the_oracles_on_exactly_the_groups_entries(monkeypatch):
    from parity.golden import bless
    from parity.config import Config, Family
    from parity.golden.diff_page import group_verdicts
    fam = Family("f", tuple(Config(n, arch="gfx1250", spec={}) for n in ("a", "b", "c")))
    g1 = C.ChangeGroup("f", C.TEXT, ("1",), entries=[("a", "llvm23"), ("a", "llvm20")])
    g2 = C.ChangeGroup("f", C.TEXT, ("2",), entries=[("b", "llvm22")])
    g3 = C.ChangeGroup("f", C.REMOVED, ("3",), entries=[("gone", "llvm23")])
    seen = {}

    def fake_run_oracles(families, changed, **kw):
        seen["changed"] = changed
        rep = bless.OracleReport()
        rep.add("f", "a@llvm20: validity oracle: bad")
        rep.add("f", "b@llvm23: numerics oracle: off by one")  # numerics runs llvm23 text of config b
        return rep
    monkeypatch.setattr(bless, "run_oracles", fake_run_oracles)
    v = group_verdicts([fam], [g1, g2, g3])
    assert seen["changed"] == {"f": {"llvm23": {"a"}, "llvm20": {"a"}, "llvm22": {"b"}}}
    assert v == {g1.gid: ["a@llvm20: validity oracle: bad"], g2.gid: ["b@llvm23: numerics oracle: off by one"]}


def _unrolled(degree: int, width: int, nsw: bool) -> str:
    """The unrolled Stage-2 slab sum of one degree and vector width, main path and scalar tail."""
    flags = "nuw nsw" if nsw else "nuw"
    vt = "float" if width == 1 else f"<{width} x float>"
    out, n = ["define void @k() {", "vector0:"], 1
    for path, t, idx in (("main", vt, "%elem"), ("tail", "float", "%jc")):
        out.append(f"  %pws{n} = getelementptr inbounds float, ptr addrspace(1) %ws_ptr, i64 {idx}0")
        out.append(f"  %slab{n + 1} = load {t}, ptr addrspace(1) %pws{n}, align 4")
        acc, off, n = f"%slab{n + 1}", f"{idx}0", n + 2
        for _ in range(1, degree):
            out += [f"  %off{n} = add {flags} i64 {off}, %mk0",
                    f"  %pws{n + 1} = getelementptr inbounds float, ptr addrspace(1) %ws_ptr, i64 %off{n}",
                    f"  %slab{n + 2} = load {t}, ptr addrspace(1) %pws{n + 1}, align 4",
                    f"  %acc{n + 3} = fadd {t} {acc}, %slab{n + 2}"]
            acc, off, n = f"%acc{n + 3}", f"%off{n}", n + 4
        out.append(f"  call void @use({t} {acc})")
    return "\n".join(out + ["  ret void", "}"]) + "\n"


def test_one_edit_in_an_unrolled_sum_is_one_group_over_degrees_and_widths():
    """Issue 38: dropping nsw from the unrolled slab-offset add touches 1 to 31 copies per
    entry (each degree, the vector and the scalar tail path); it is one group of a few lines."""
    work, ref = {}, {}
    for d in (2, 4, 7, 8, 16, 32):
        for w in (1, 4, 8):
            for fl in ("llvm20", "llvm22", "llvm23"):
                k = f"f/bf16_v{w}_d{d}@{fl}"
                ref[k] = {"status": "ok", "sha256": f"{k}0", "text": _unrolled(d, w, True)}
                work[k] = {"status": "ok", "sha256": f"{k}1", "text": _unrolled(d, w, False)}
    diffs = D.compare(work, ref, ["f"], ["f"])
    [g] = diffs["f"].groups
    assert len(g.entries) == 54
    assert g.key == ((("-  %off# = add nuw nsw T %_, %_", "+  %off# = add nuw T %_, %_")),)
    changed = [x for h in g.hunks for x in h if x[:1] in "-+"]
    assert changed == ["-  %off# = add nuw nsw i64 %elem#, %mk#", "+  %off# = add nuw i64 %elem#, %mk#"]
    # d2: 2 copies (main, tail), 1 folded away; d32: 62 copies, 61 folded away
    assert (min(g.repeats), max(g.repeats)) == (1, 61)
    lines = D.report_lines(diffs, "HEAD", "0" * 40, ("llvm20", "llvm22", "llvm23"), stat=False, color=False)
    assert len(lines) < 30, "\n".join(lines)
    assert "  (shown once: the same change at 1 to 61 more places per entry)" in lines
    page = markdown_page(diffs, "HEAD", "0" * 40, ("llvm23",), None)
    assert len(page.splitlines()) < 40 and page.count("-  %off#") == 1
    # another edit of the same loop (an fadd flag) is another group
    work["f/bf16_v4_d4@llvm23"]["text"] = work["f/bf16_v4_d4@llvm23"]["text"].replace("fadd", "fadd nnan")
    assert len(D.compare(work, ref, ["f"], ["f"])["f"].groups) == 2


# -- one grouping for `parity review --list` / `diff --base` and the git diff driver -------

def _sha(text):
    import hashlib
    return hashlib.sha256(text.encode()).hexdigest()


def _golden_pair():
    """(old, new) golden flavors of family f and the IR of every sha256: one edit that changes a
    store (a@3 flavors), adds config n, removes config gone, makes rj rejected, makes back lower
    again and changes why's rejection reason; each flavor prints its own text (bytes, sha differ)."""
    old, new, texts = {}, {}, {}

    def ok(kernel, text):
        texts[_sha(text)] = text
        return {"bytes": len(text.encode()), "kernel": kernel, "sha256": _sha(text)}
    for fl in ("llvm20", "llvm22", "llvm23"):
        o, n = old.setdefault(fl, {}), new.setdefault(fl, {})
        o["a"], n["a"] = ok("k_a", STORE + f"; {fl}\n"), ok("k_a", STORE.replace("align 16", "align 2") + f"; {fl}\n")
        n["n"] = ok("k_n", f"define void @k_n() ; {fl}\n")
        o["gone"] = ok("k_gone", f"define void @k_gone() ; {fl}\n")
        o["rj"], n["rj"] = ok("k_rj", f"define void @k_rj() ; {fl}\n"), {"rejected": "tile too large"}
        o["back"], n["back"] = {"rejected": "no cluster"}, ok("k_back", f"define void @k_back() ; {fl}\n")
        o["why"], n["why"] = {"rejected": "old reason"}, {"rejected": "new reason"}
        o["same"] = n["same"] = ok("k_same", f"define void @k_same() ; {fl}\n")
    return old, new, texts


def _as_units(flavors, texts):
    """The golden entries as `parity diff --base` / `review` outcomes (parity/golden/ir_diff.py)."""
    return {f"f/{cfg}@{fl}": ({"status": "rejected", "reason": e["rejected"]} if "rejected" in e else
                              {"status": "ok", "kernel": e["kernel"], "sha256": e["sha256"],
                               "text": texts[e["sha256"]]})
            for fl, es in flavors.items() for cfg, e in es.items()}


class _Cache:
    def __init__(self, texts):
        self.texts = texts

    def get(self, sha):
        return self.texts.get(sha)


def test_review_and_the_git_diff_driver_group_one_change_alike(tmp_path):
    # before: 6 groups in review --list / diff --base, 14 in `git diff golden/` (the driver keyed an
    # added, removed or newly rejected entry by its bytes and sha256: one group per flavor)
    from parity.golden import ext_diff as E
    from parity.golden import review as RV
    from parity.golden import shards as G
    old, new, texts = _golden_pair()
    groups = D.compare(_as_units(new, texts), _as_units(old, texts), ["f"], ["f"])["f"].groups
    lines = E.grouped("golden/f.json", G.render_shard("f", old).encode(), G.render_shard("f", new).encode(),
                      tmp_path, _Cache(texts))
    assert lines[3].startswith("# f: 18 entries changed in 6 change group(s) ")
    heads = [x for x in lines if x.startswith("  @@ group ")]
    assert heads == [f"  @@ group {i}/6 [{g.gid}] {g.title()}" for i, g in enumerate(groups, 1)]
    assert [h.split("] ", 1)[1] for h in heads] == [
        "IR change: 3 entries: a@{llvm20,llvm22,llvm23}",
        "added: lowers (k_back), at base rejected 'no cluster': 3 entries: back@{llvm20,llvm22,llvm23}",
        "added: lowers (k_n): 3 entries: n@{llvm20,llvm22,llvm23}",
        "removed: lowers (k_gone): 3 entries: gone@{llvm20,llvm22,llvm23}",
        "removed: lowers (k_rj), now rejected 'tile too large': 3 entries: rj@{llvm20,llvm22,llvm23}",
        "outcome: rejected 'old reason' -> rejected 'new reason': 3 entries: why@{llvm20,llvm22,llvm23}"]
    # `review --list` prints the same groups, ids and first lines
    assert [x.split()[0] for x in RV.list_lines(groups)] == [h.split("[")[1].split("]")[0] for h in heads]
