"""Every public warning and error of the package, in one place (no imports: any module may
use them without an import cycle)."""

__all__ = ["ChecksumError", "DatasetUnavailableError"]


class DatasetUnavailableError(OSError):
    """A data set is not in the cache and could not be downloaded.

    The message names the file to download, the address to get it from and the path to
    save it under.
    """


class ChecksumError(ValueError):
    """A downloaded or cached file does not have the expected SHA-256 checksum."""

