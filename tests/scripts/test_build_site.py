"""Tests of scripts/build_site.py's output check: the marker of a previous build is validated
before it may vouch for the files of the folder a build replaces."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import build_site  # noqa: E402


def _folder(tmp_path, marker_text):
    out = tmp_path / "out"
    (out / "notebooks").mkdir(parents=True)
    (out / "index.html").write_text("page", encoding="utf-8")
    (out / "notebooks" / "a.html").write_text("page", encoding="utf-8")
    (out / build_site.MARKER).write_text(marker_text, encoding="utf-8")
    return out


def test_a_marker_listing_the_folder_is_accepted(tmp_path):
    out = _folder(tmp_path, json.dumps({"files": ["index.html", "notebooks",
                                                  "notebooks/a.html"]}))
    assert build_site.check_out(out) == out


@pytest.mark.parametrize(("marker", "message"), [
    ("not json", "cannot be read as JSON"),
    (json.dumps(["index.html"]), 'does not hold a list of file names under "files"'),
    (json.dumps({"files": "a"}), 'does not hold a list of file names under "files"'),
    (json.dumps({"files": "index.html"}), 'does not hold a list of file names under "files"'),
    (json.dumps({"files": {"index.html": 1}}), 'does not hold a list'),
    (json.dumps({"files": ["index.html", 3]}), 'does not hold a list'),
    (json.dumps({}), 'does not hold a list'),
    (json.dumps({"files": ["index.html", "notebooks", "notebooks/a.html", "gone.html"]}),
     "lists 'gone.html', which is not there"),
    (json.dumps({"files": ["index.html", "notebooks", "notebooks/a.html", "/etc/passwd"]}),
     "lists '/etc/passwd', not a relative path"),
    (json.dumps({"files": ["index.html", "notebooks", "notebooks/../index.html"]}),
     "not a relative path"),
    (json.dumps({"files": ["index.html", "notebooks", "./notebooks/a.html"]}),
     "not a relative path"),
    (json.dumps({"files": ["index.html", "notebooks", "notebooks\\a.html"]}),
     "not a relative path"),
    (json.dumps({"files": ["", "index.html"]}), "not a relative path"),
])
def test_anything_but_a_list_of_present_relative_names_is_refused(tmp_path, marker, message):
    out = _folder(tmp_path, marker)
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    with pytest.raises(build_site.OutError, match=message) as info:
        build_site.check_out(out)
    assert "choose a new or empty folder" in str(info.value)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before


def test_a_damaged_marker_alone_is_refused(tmp_path):
    """Even with nothing else in the folder: a marker the builder did not write is refused."""
    out = tmp_path / "out"
    out.mkdir()
    (out / build_site.MARKER).write_text(json.dumps({"files": "a"}), encoding="utf-8")
    with pytest.raises(build_site.OutError, match="does not hold a list"):
        build_site.check_out(out)


def test_a_marker_that_is_a_folder_is_refused(tmp_path):
    out = tmp_path / "out"
    (out / build_site.MARKER).mkdir(parents=True)
    with pytest.raises(build_site.OutError, match="is not a regular file"):
        build_site.check_out(out)
