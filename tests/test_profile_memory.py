"""Memory model against hand-computed byte counts, with and without gc."""

from __future__ import annotations

import io

from profile_factory import node

from graphc.profile import FunctionProfile, ProfileStats, StorageRecord, ValueInfo
from graphc.profile.summaries.memory import gc_schedule, memory_figures, output_rows, storage_roots

KB8 = 8000


def _mem_node(pos, name, ins, outs, kind="c", nbytes=KB8, alias=None, shape=(1000,)):
    return node(
        pos,
        name,
        name.split("(")[0],
        calls=1,
        input_slots=ins,
        output_slots=outs,
        output_kinds=[kind],
        output_aliases=[alias],
        out_bytes_min=[nbytes],
        out_bytes_max=[nbytes],
        outputs=[ValueInfo("float64", shape, None)],
    )


def chain() -> FunctionProfile:
    """x (slot 0) and a constant (slot 1) are not intermediate storage.

    0: a = exp(x)          slot 2, created 8000B
    1: b = a.T             slot 3, view of a
    2: c = add(b, x)       slot 4, created 8000B
    3: d = neg_inplace(c)  slot 5, inplace on c
    4: e = sum(d)          slot 6, created 8B, function output
    With gc: a lives over nodes 0-2 (through its view b), c over 2-4: peak 16000 at
    node 2, 8008 at node 4.  Without gc: 8000 + 8000 + 8 = 16008.
    """
    return FunctionProfile(
        "chain",
        allow_gc=True,
        vm_kind="cvm",
        memory_recorded=True,
        inputs=[StorageRecord("x", 0, KB8, "float64", (1000,))],
        constants=[StorageRecord("2.0", 1, 8, "float64", ())],
        output_slots=[6],
        nodes=[
            _mem_node(0, "exp(x)", [0], [2]),
            _mem_node(1, "transpose(exp.0)", [2], [3], kind="v", nbytes=KB8),
            _mem_node(2, "add(transpose.0, x)", [3, 0], [4]),
            _mem_node(3, "neg_inplace(add.0)", [4], [5], kind="i", nbytes=KB8),
            _mem_node(4, "sum(neg_inplace.0)", [5], [6], nbytes=8, shape=()),
        ],
    )


def test_roots_follow_views_and_inplace():
    assert storage_roots(chain()) == {2: 2, 3: 2, 4: 4, 5: 4, 6: 6}


def test_derived_gc_schedule_frees_after_last_reader_keeps_outputs():
    assert gc_schedule(chain()) == [[], [2], [3], [4], [5]]


def test_peaks_with_and_without_gc():
    fig = memory_figures(chain())
    assert fig.peak_gc == 16000
    assert fig.peak_no_gc == 16008
    assert fig.saved_by_gc == 8


def test_view_keeps_its_base_alive():
    """exp(x) is last read by the view at node 1, but the view is read at node 3, so its
    8000B stay allocated while c = exp2(x) is created at node 2: 24000B at peak."""
    fp = chain()
    fp.nodes[2] = _mem_node(2, "exp2(x)", [0], [4])
    fp.nodes[3] = _mem_node(3, "add(transpose.0, exp2.0)", [3, 4], [5])
    fp.nodes[4] = _mem_node(4, "sum(add.0)", [5], [6], nbytes=8, shape=())
    assert memory_figures(fp).peak_gc == 24000
    assert memory_figures(fp).peak_no_gc == 24008


def test_recorded_frees_after_is_the_schedule():
    fp = chain()
    for n in fp.nodes:
        n.frees_after = []
    fp.nodes[-1].frees_after = [2, 3, 4, 5]
    assert memory_figures(fp).peak_gc == 16008


def test_unread_intermediate_dies_after_its_producer():
    fp = FunctionProfile(
        "dead",
        output_slots=[3],
        nodes=[_mem_node(0, "big(x)", [0], [2], nbytes=100), _mem_node(1, "f(x)", [0], [3])],
    )
    assert memory_figures(fp).peak_gc == 8000
    assert memory_figures(fp).peak_no_gc == 8100


def test_largest_outputs_rows():
    rows = output_rows([chain()])
    assert [r.nbytes for r in rows] == [8000, 8000, 8000, 8000, 8]
    assert rows[1].kinds == "v" and rows[3].kinds == "i"
    unknown = FunctionProfile("u", nodes=[node(0, "a(x)", "a", output_slots=[1, 2])])
    assert output_rows([unknown])[0].shapes == (None, None)


def test_memory_section_lines():
    out = io.StringIO()
    ProfileStats([chain()]).summary(file=out, min_memory_size=1024, n_apply_to_print=3)
    lines = out.getvalue().splitlines()
    start = lines.index("Memory Profile")
    sec = lines[start : lines.index("", lines.index("---", start + 3) + 2)]
    assert sec[3:10] == [
        "    Max peak memory with current setting (vm=cvm, allow_gc=True)",
        "        CPU: 16KB (16000B)",
        "    Max peak memory with vm=py (both VMs free storage at the same points)",
        "        CPU: 16KB (16000B)",
        "    Max peak memory if allow_gc=False",
        "        CPU: 16KB (16008B)",
        "    Memory saved by gc: 0KB (8B)",
    ]
    # the in-place neg would need its own 8000B buffer, but only once c is freed: same peak
    assert sec[10:12] == [
        "    Max peak memory with current setting and graphc flag optimizer_excluding=inplace",
        "        CPU: 16KB (16000B)",
    ]
    assert sec[12].startswith("    Minimum peak from all valid apply node order is 16KB (16000B)")
    assert sec[13:15] == ["        found by exhaustive search", "---"]
    text = "\n".join(lines)
    assert "         8000B  [(1000,)] c exp(x)\n" in text
    assert "         8000B  [(1000,)] v transpose(exp.0)\n" in text
    # 4th 8000B row is cut by n_apply_to_print=3; with the 8B sum: 8008B of 32008B
    assert (
        "   ... (remaining 2 Apply account for  8008B/32008B (25.02%) of the Apply with "
        "dense outputs sizes)"
    ) in text
    assert "         8000B  (1000,) x" in text
    assert "            8B  in 1 smaller than 1024B" in text  # the constant 2.0
    out = io.StringIO()
    ProfileStats([chain()]).summary(file=out, min_memory_size=8)
    assert "            8B  () 2.0" in out.getvalue()


def test_no_gc_current_setting():
    fp = chain()
    fp.allow_gc = False
    out = io.StringIO()
    ProfileStats([fp]).summary(file=out, memory=True)
    text = out.getvalue()
    assert (
        "    Max peak memory with current setting (vm=cvm, allow_gc=False)\n"
        "        CPU: 16KB (16008B)"
    ) in text
    assert "    Max peak memory if allow_gc=True\n        CPU: 16KB (16000B)" in text


def test_small_outputs_summed():
    fp = chain()
    out = io.StringIO()
    ProfileStats([fp]).summary(file=out, min_memory_size=10**6)
    text = out.getvalue()
    assert "remaining 5 Apply account for 32008B/32008B (100.00%)" in text
    assert "All Apply nodes have output sizes that take less than 1000000B." in text


def test_memory_summary_cut_is_not_called_small():
    from graphc.profile.summaries.memory import memory_summary

    s = memory_summary([chain()], n_apply_to_print=0, min_memory_size=1)
    assert (s.remaining_count, s.remaining_bytes, s.total_bytes) == (5, 32008, 32008)
    assert not s.all_small
    assert memory_summary([chain()], 5, 10**6).all_small
    (fm,) = memory_summary([chain()]).functions
    assert (fm.current, fm.other_vm_peak, fm.other_gc, fm.saved_by_gc) == (16000, 16000, 16008, 8)
    assert fm.other_vm == "py"


def test_small_constants_are_summed_on_one_line():
    from graphc.profile.render.text import _storage_lines

    consts = [StorageRecord("TensorConstant{0.0}", 3, 8, "float64", ()),
              StorageRecord("big", 4, 8000, "float64", (1000,)),
              StorageRecord("TensorConstant{[1]}", 5, 1, "int8", (1,))]  # fmt: skip
    lines = _storage_lines("Constants", consts, 1024)
    assert lines == [
        "    Constants (not counted above):",
        "         8000B  (1000,) big",
        "            9B  in 2 smaller than 1024B",
    ]
    assert len(_storage_lines("Constants", consts)) == 4  # no threshold: one line each
