import pytest

import floe


@pytest.fixture(scope="session")
def small():
    """Twelve 5x5 instances of 3 agents with their optimal plans."""
    return floe.generate(3, 5, count=12, seed=7, wait_ratio=0.5)
