import numpy as np
import pytest

import pimhe


@pytest.fixture(scope="session")
def cpu():
    return pimhe.Backend.cpu(2)


@pytest.fixture(scope="session")
def bgv():
    ctx = pimhe.Context.bgv(n=4096)
    return ctx, ctx.keygen(seed=1)


@pytest.fixture(scope="session")
def bfv():
    ctx = pimhe.Context.bfv(n=4096)
    return ctx, ctx.keygen(seed=2)


@pytest.fixture(scope="session")
def ckks():
    # The smallest CKKS preset (N = 8192): depth for a product and a small polynomial.
    ctx = pimhe.Context.ckks(n=8192)
    return ctx, ctx.keygen(seed=3, rotations=[1, -1, 2], conjugation=True)


@pytest.fixture
def rng():
    return np.random.default_rng(7)
