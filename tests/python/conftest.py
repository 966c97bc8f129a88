import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from ablation_testing import Daemon  # noqa: E402


@pytest.fixture(scope="module")
def daemon():
    d = Daemon()
    yield d
    d.stop()
