from pathlib import Path

import pytest

from hiddenweb.forms.lvs import LVS, LVSError, load_file


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "x.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_bundled_lvs_loads_and_matches_labels():
    lvs = LVS.from_dir()
    assert lvs.labels, "the bundled lvs_data/ must hold labels"
    assert all(label.values for label in lvs.labels)
    # the bundled gazetteer places every city it lists (Denver too, in CO, which no site
    # offers): a region form never gets a city the LVS knows to be elsewhere
    city = lvs.get("city")
    placed = {c for group in city.within["region"].values() for c in group}
    assert set(city.values) == placed
    assert "Denver" in city.values_elsewhere({"region": "MA"})
    assert [label.name for label in lvs.labels if label.open] == ["keyword"]


def test_match_prefers_visible_label_over_nearby_text(tmp_path):
    write(tmp_path, '[city]\nlabels=["city","town"]\nvalues=["Riverton"]\n'
                    '[author]\nlabels=["author","writer"]\nvalues=["Ada"]\n')
    lvs = LVS.from_dir(tmp_path)
    assert lvs.match(["Town", "f1", "", "", "", "author"]).name == "city"
    assert lvs.match(["", "authorName", "", "", "", ""]).name == "author"
    assert lvs.match(["Colour", "c", "", "", "", ""]) is None


def test_syntax_error_names_file_and_line(tmp_path):
    path = write(tmp_path, '[city]\nlabels = ["city"\nvalues = ["a"]\n')
    with pytest.raises(LVSError) as err:
        load_file(path)
    assert str(path) in str(err.value) and "line" in str(err.value)


def test_missing_values_names_table_and_line(tmp_path):
    path = write(tmp_path, '# comment\n\n[city]\nlabels = ["city"]\n')
    with pytest.raises(LVSError, match=r"x\.toml, line 3, table \[city\]: 'values'"):
        load_file(path)


def test_bad_entries_and_unknown_keys_are_refused(tmp_path):
    with pytest.raises(LVSError, match="non-string or empty"):
        load_file(write(tmp_path, '[a]\nlabels=["a"]\nvalues=["x", 3]\n'))
    with pytest.raises(LVSError, match="unknown key"):
        load_file(write(tmp_path, '[a]\nlabels=["a"]\nvalues=["x"]\nvalus=["y"]\n'))


def test_open_is_a_boolean_and_defaults_to_closed(tmp_path):
    labels = load_file(write(tmp_path, '[a]\nlabels=["a"]\nvalues=["x"]\n\n'
                                       '[b]\nopen = true\nlabels=["b"]\nvalues=["y"]\n'))
    assert [label.open for label in labels] == [False, True]
    with pytest.raises(LVSError, match=r"line 1, table \[a\]: 'open' must be true or false"):
        load_file(write(tmp_path, '[a]\nopen = "yes"\nlabels=["a"]\nvalues=["x"]\n'))


def test_empty_or_missing_directory(tmp_path):
    with pytest.raises(LVSError, match="no \\*.toml"):
        LVS.from_dir(tmp_path)
    with pytest.raises(LVSError, match="not found"):
        LVS.from_dir(tmp_path / "nope")


def test_add_values_keeps_order_and_skips_known(tmp_path):
    write(tmp_path, '[city]\nlabels=["city"]\nvalues=["a","b"]\n')
    lvs = LVS.from_dir(tmp_path)
    assert lvs.add_values("city", ["b", "c"]) == 1
    assert lvs.labels[0].values == ["a", "b", "c"]
