"""Encrypted statistics over users (seed 002): every user's row encrypted on its own, the
server sums ciphertexts; mean, variance and linear regression checked against numpy."""

import numpy as np

import pimhe

rng = np.random.default_rng(3)
users = 64
age = rng.integers(20, 70, users).astype(float)
hours = np.round(rng.uniform(10, 50, users), 1)
income = np.round(800 + 30 * age + 12 * hours + rng.normal(0, 50, users), 2)
data = np.column_stack([age, hours, income])
columns = ["age", "hours", "income"]

mean = pimhe.stats.mean(data, columns, scheme="bgv", backend=pimhe.Backend.upmem_emu(dpus=64))
print(mean)
assert np.allclose(list(mean.values().values()), data.mean(axis=0), rtol=1e-12)

variance = pimhe.stats.variance(data, columns, scheme="bfv")
print(variance)
assert np.allclose(list(variance.values().values()), data.var(axis=0), rtol=1e-9)

fit = pimhe.stats.linear_regression(data, columns, backend=pimhe.Backend.cpu())
print(fit)
design = np.column_stack([np.ones(users), data[:, :2]])
want, *_ = np.linalg.lstsq(design, data[:, 2], rcond=None)
assert np.allclose([e.encrypted for e in fit.estimates[:3]], want, rtol=1e-8)
print(f"OK: mean, variance and regression over {users} users match numpy")
