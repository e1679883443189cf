"""The convolution's im2col workspace is reported by the profile and counted in its memory
peaks, for the implementation that ran."""

from __future__ import annotations

import io

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.profile.summaries.memory import peak_with_gc, peak_without_gc
from graphc.tensor.nnet import conv2d


@pytest.mark.parametrize("linker", ["py", "c|py"])
def test_conv_workspace_shows_in_the_memory_section_and_the_peaks(linker):
    x, w = T.dtensor4("x"), T.dtensor4("w")
    with graphc.config.change_flags(profile_memory=True):
        f = graphc.function([x, w], conv2d(x, w).sum(), profile=True,
                            mode=graphc.Mode(linker=linker, optimizer=None))  # fmt: skip
        f(np.ones((3, 2, 9, 8)), np.ones((4, 2, 3, 2)))
    out_bytes = 3 * 4 * 7 * 7 * 8
    taps, positions = 2 * 3 * 2, 7 * 7
    if linker == "py":  # every image's (OH*OW) x (C*KH*KW) float64 columns at once
        workspace = 3 * positions * taps * 8
    else:  # one chunk (all 3 images): columns, (F, positions) product, filters as a matrix
        workspace = (3 * positions * taps + 4 * 3 * positions + 4 * taps) * 8
    f.profile.refresh()
    fp = f.profile.functions[0]
    conv_node = next(n for n in fp.nodes if n.op_class.endswith("Conv2d"))
    assert conv_node.impl == ("C" if linker == "c|py" else "Py")
    assert conv_node.workspace_bytes == workspace
    assert out_bytes + workspace <= peak_with_gc(fp) <= out_bytes + workspace + 64
    assert peak_without_gc(fp) >= out_bytes + workspace
    buf = io.StringIO()
    f.profile.summary(file=buf)
    text = buf.getvalue()
    assert "Scratch workspace" in text
    assert any(f"{workspace}B" in line and "Conv2d" in line for line in text.splitlines())


def test_gradient_ops_report_their_workspace():
    x, w = T.dtensor4("x"), T.dtensor4("w")
    y = conv2d(x, w, border_mode="full")
    gx, gw = graphc.grad(y.sum(), [x, w])
    shapes_x, shapes_w, top = (2, 3, 6, 5), (4, 3, 2, 2), (2, 4, 7, 6)
    gi, gwn = gx.owner, gw.owner
    cols = 2 * 7 * 6 * 12 * 8
    assert gi.op.workspace_bytes(gi, [shapes_w, top, (2,)], [shapes_x]) == cols + 2 * 3 * 30 * 8
    assert gwn.op.workspace_bytes(gwn, [shapes_x, top, (2,)], [shapes_w]) == cols
    chunk = 2 * 7 * 6  # both images in one chunk
    c_bytes = (chunk * 12 + 4 * chunk + 4 * 12) * 8
    assert gwn.op.workspace_bytes(gwn, [shapes_x, top, (2,)], [shapes_w], c_impl=True) == c_bytes
