"""CKKS-specific tools: ``pimhe.ckks.bootstrap`` (bootstrapping)."""

from . import bootstrap

__all__ = ["bootstrap"]
