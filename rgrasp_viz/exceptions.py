"""Every public warning and error of :mod:`rgrasp_viz`, in one place.

This module imports nothing of the package (the model is scikit-learn's
``sklearn/exceptions.py``): every layer can import from it without forming an import
circle, and a user catches or filters any of them as ``rgrasp_viz.exceptions.<Name>``.

=========================  ===========================================================
name                       raised or warned when
=========================  ===========================================================
``ConvergenceWarning``     a run did not end at a minimiser (status and message say why)
``DataWarning``            the data look unsuited to what was asked
``DatasetUnavailableError``  a data set is neither cached nor downloadable
``ChecksumError``          a downloaded or cached file has the wrong SHA-256
``DataFileError``          a real data file in the data directory is damaged
``OutputError``            ``reproduce --out`` cannot be used
``OutputWriteError``       writing a run's outputs failed part-way (nothing was replaced)
=========================  ===========================================================
"""

__all__ = [
    "ChecksumError",
    "ConvergenceWarning",
    "DataFileError",
    "DataWarning",
    "DatasetUnavailableError",
    "OutputError",
    "OutputWriteError",
]


class ConvergenceWarning(UserWarning):
    """A run did not end at a minimiser: it stopped at ``max_iter``, diverged, stalled, made no
    progress, stopped at a fixed point of hard thresholding, or hardly moved the objective
    within its budget (``solve(..., warn=False)`` silences it)."""


class DataWarning(UserWarning):
    """The data look unsuited to what was asked: columns on very different scales (the
    selection of ``H_s`` then depends on the units), or 0/1 labels given to the least-squares
    loss."""


class DatasetUnavailableError(OSError):
    """A data set is not in the cache and could not be downloaded.

    The message names the file to download, the address to get it from and the path to
    save it under.
    """


class ChecksumError(ValueError):
    """A downloaded or cached file does not have the expected SHA-256 checksum."""


class DataFileError(ValueError):
    """A real data file in the data directory is damaged (one-line message)."""


class OutputError(Exception):
    """``reproduce --out`` cannot be used (a file, not writable, not a run's folder, or
    busy)."""


class OutputWriteError(Exception):
    """Writing a run's outputs failed part-way (e.g. a full disk); ``--out`` was left as it
    was."""
