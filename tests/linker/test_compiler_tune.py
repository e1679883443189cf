"""A compiler whose ``-march=native`` tunes for an AMD core without AVX-512 on a CPU that
has it (gcc 12.2 on Zen 4 takes it for Zen 3) builds with ``-mtune=generic``; the probe
finds it once per compiler binary and CPU, and every build and cache key gets it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from graphc.linker import compiler as compiler_mod
from graphc.linker.cache import CompileCache
from graphc.linker.compiler import DEFAULT_CFLAGS, Compiler, find_compiler, tune_flags_for


def target_help(tune: str, avx512f: str) -> str:
    """The lines of ``gcc -march=native -Q --help=target`` the decision reads."""
    return (
        "The following options are target specific:\n"
        "  -m128bit-long-double        \t\t[enabled]\n"
        f"  -mavx512f                   \t\t{avx512f}\n"
        "  -mavx512fp16                \t\t[disabled]\n"
        f"  -march=                     \t\t{tune}\n"
        f"  -mtune=                     \t\t{tune}\n"
    )


@pytest.mark.parametrize(
    ("tune", "avx512f", "flags"),
    [
        ("znver3", "[enabled]", ("-mtune=generic",)),  # Zen 4 under gcc 12.2
        ("znver1", "[enabled]", ("-mtune=generic",)),
        ("znver3", "[disabled]", ()),  # a real Zen 3
        ("znver4", "[enabled]", ()),  # a gcc that knows Zen 4
        ("sapphirerapids", "[enabled]", ()),
        ("icelake-server", "[enabled]", ()),
    ],
)
def test_only_a_pre_avx512_amd_tuning_on_an_avx512_cpu_is_replaced(tune, avx512f, flags):
    assert tune_flags_for(target_help(tune, avx512f)) == flags


def test_unreadable_help_means_no_flags():
    assert tune_flags_for("") == ()
    assert tune_flags_for("error: unrecognized command-line option '-Q'") == ()


def test_the_tuning_reaches_every_build_and_key(tmp_path: Path):
    plain = Compiler(("cc",), "/usr/bin/cc", "cc 12", has_mvec=False)
    tuned = Compiler(
        ("cc",), "/usr/bin/cc", "cc 12", has_mvec=False, tune_flags=("-mtune=generic",)
    )
    assert plain.default_cflags == DEFAULT_CFLAGS
    flags, _ = CompileCache._options(tuned, ("-g",), ())
    # after -march=native, which it overrides, and before the caller's own flags
    assert flags == (*DEFAULT_CFLAGS, "-mtune=generic", "-g")
    assert flags.index("-mtune=generic") > flags.index("-march=native")
    cache = CompileCache(tmp_path / "root")
    src = "int graphc_tune_probe(void) { return 1; }\n"
    assert cache._key(src, plain, *CompileCache._options(plain, (), ())) != cache._key(
        src, tuned, *CompileCache._options(tuned, (), ())
    )


def test_the_probe_remembers_the_tuning_per_binary_and_cpu(monkeypatch, tmp_path: Path):
    calls = []

    def fake_probe(argv, path):  # no compiler run: what a probe found, counted
        calls.append(argv)
        return Compiler(argv, path, "cc 12", False, ("-mtune=generic",))

    monkeypatch.setattr(compiler_mod, "_probe", fake_probe)
    monkeypatch.setattr(compiler_mod, "_memo", {})
    monkeypatch.setenv("CC", sys.executable)  # a binary on disk to key the memo by
    first = find_compiler(tmp_path / "probes")
    assert first.tune_flags == ("-mtune=generic",) and len(calls) == 1
    monkeypatch.setattr(compiler_mod, "_memo", {})  # a new process: read from the probe file
    again = find_compiler(tmp_path / "probes")
    assert again == first and len(calls) == 1
    monkeypatch.setattr(compiler_mod, "_cpu", lambda: "another CPU")
    monkeypatch.setattr(compiler_mod, "_memo", {})
    find_compiler(tmp_path / "probes")
    assert len(calls) == 2  # probed again on another CPU
