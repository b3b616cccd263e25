"""The package version, in one place (read by ``rgrasp_viz.__version__`` and by the traces,
which record the versions that produced them)."""

__version__ = "0.1.0"
