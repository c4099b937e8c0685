from __future__ import annotations

import fsspec_xrootd as m


def test_version():
    assert m.__version__
