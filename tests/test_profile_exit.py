"""At-exit printing: every profile, then their sum; a broken profile never stops the rest."""

from __future__ import annotations

from profile_factory import four_node_function

from graphc.profile import FunctionProfile, ProfileStats, print_at_exit


class _Gone:
    def pull(self) -> None:
        raise RuntimeError("vm is gone")


def _broken() -> ProfileStats:
    stats = ProfileStats([])
    stats.add_live(FunctionProfile("broken"), _Gone())
    return stats


def test_continues_past_failing_profile_and_sums_the_rest(tmp_path):
    path = tmp_path / "prof.txt"
    stats = [
        ProfileStats([four_node_function("f")]),
        _broken(),
        ProfileStats([four_node_function("g")]),
    ]
    print_at_exit(stats, str(path))
    text = path.read_text()
    assert "graphc profile of broken could not be printed: RuntimeError('vm is gone')" in text
    messages = [line for line in text.splitlines() if line.startswith("  Message: ")]
    assert messages == [
        "  Message: f",
        "  Message: g",
        "  Message: Sum of all(2) printed profiles at exit",
    ]
    assert "  Time in 20 calls to Function.__call__: 1.600000e-02s" in text


def test_stdout_and_stderr(capsys):
    print_at_exit([ProfileStats([four_node_function()])], "stdout")
    out, err = capsys.readouterr()
    assert "  Message: f" in out and err == ""
    assert "Sum of all" not in out  # a single profile needs no sum
    print_at_exit([ProfileStats([four_node_function()])], "stderr")
    out, err = capsys.readouterr()
    assert "  Message: f" in err and out == ""
