"""DL-Bench's release formats as pure functions: .txt and CSV in and out, labels, ground truth.

Unit-level (no workspace, no files): the quirks of the published release, and that what
`curator release` writes reads back the same.
"""

from __future__ import annotations

import csv

from curator.dlbench import fileformat, label_map
from curator.problem import Problem

TABLE = label_map.spelling_map()


# -- the .txt form -------------------------------------------------------------------------


def test_txt_line_endings_of_every_platform_give_the_same_fields():
    unix = ("stage: Training\ntask: Regression\ndata: Table\n\nprompt:\nFirst line.\n"
            "Second line.\n\nrepo:cleanlab\n")
    for text in (unix, unix.replace("\n", "\r\n"), unix.replace("\n", "\r")):
        record = fileformat.parse_txt(text, "cleanlab_fit1.txt")
        assert record.fields == {"stage": "Training", "task": "Regression", "data": "Table",
                                 "prompt": "First line.\nSecond line.", "repo": "cleanlab"}
        assert record.notes == []


def test_blank_lines_before_the_first_key_are_not_a_preamble():
    record = fileformat.parse_txt("\n\n   \nstage: Training\nprompt: Fit it.\n", "x.txt")
    assert record.notes == []
    assert record.fields == {"stage": "Training", "prompt": "Fit it."}


def test_rendered_txt_reads_back_field_for_field():
    row = {"repo": "kornia", "filename": "kornia_scale1.txt", "function": "scale",
           "class": "", "ground Truth": "kornia/scale.py#L3-L9",
           "test_cases": "tests/test_scale.py::test_a", "prompt": "Scale `x`.\n",
           "stage": "Pre/Post Processing", "task": "General", "data": "Image"}
    record = fileformat.parse_txt(fileformat.render_txt(row), row["filename"])
    assert record.fields == {"stage": "Pre/Post Processing", "task": "General", "data": "Image",
                             "prompt": "Scale `x`.", "ground_truth": "kornia/scale.py#L3-L9",
                             "repo": "kornia", "function": "scale",
                             "test_cases": "tests/test_scale.py::test_a"}
    klass = {**row, "filename": "classes-kornianet1.txt", "function": "forward", "class": "Net"}
    record = fileformat.parse_txt(fileformat.render_txt(klass), klass["filename"])
    assert (record.fields["stage"], record.fields["data"]) == ("Image", "Pre/Post Processing")
    assert (record.fields["class"], record.fields["test_cases"]) == (
        "Net", "tests/test_scale.py::test_a")
    plain = fileformat.parse_txt(fileformat.render_txt(klass, swap_class_labels=False), "x.txt")
    assert (plain.fields["stage"], plain.fields["data"]) == ("Pre/Post Processing", "Image")


# -- the CSV form --------------------------------------------------------------------------


def _problem(**changes) -> Problem:
    fields = dict(id="kornia-rgb-to-gray", entry_point="rgb_to_grayscale", stage="prepost",
                  task="general", data="image", prompt="Convert to gray.",
                  source={"repo": "https://github.com/kornia/kornia",
                          "path": "kornia/color/gray.py", "lines": "12-40"},
                  test_node_ids=["tests/color/test_gray.py::TestGray::test_smoke",
                                 "tests/color/test_gray.py::TestGray::test_cardinality"])
    fields.update(changes)
    return Problem(**fields)


def test_export_row_of_a_repository_problem():
    row = fileformat.export_row(_problem(), "kornia_rgb_to_grayscale1.txt")
    assert row == {
        "repo": "kornia", "filename": "kornia_rgb_to_grayscale1.txt",
        "function": "rgb_to_grayscale", "class": "",
        "ground Truth": "kornia/color/gray.py#L12-L40",
        "test_cases": ("tests/color/test_gray.py::TestGray::test_smoke "
                       "tests/color/test_gray.py::TestGray::test_cardinality"),
        "prompt": "Convert to gray.", "stage": "Pre/Post Processing", "task": "General",
        "data": "Image"}
    assert list(row) == list(fileformat.CSV_COLUMNS)


def test_export_row_anchor_spellings_and_methods():
    source = {"repo": "https://github.com/pytorch/vision", "path": "torchvision/ops/boxes.py"}
    for lines, anchor in ((204, "#L204"), ("12 - 40", "#L12-L40"), ("12-L40", "#L12-L40"),
                          (None, ""), ("", "")):
        row = fileformat.export_row(_problem(source=dict(source, lines=lines)), "f.txt")
        assert row["ground Truth"] == "torchvision/ops/boxes.py" + anchor
        assert row["repo"] == "vision"
    row = fileformat.export_row(_problem(entry_point="Net.forward", kind="method", stage="model",
                                      task="segmentation", data="other"), "classes-n1.txt")
    assert (row["function"], row["class"]) == ("forward", "Net")
    assert (row["stage"], row["task"], row["data"]) == (
        "Model Construction", "Image Segmentation", "Others")
    # A label DL-Bench has no spelling for is written as it is.
    row = fileformat.export_row(_problem(stage="deployment", task="clustering", data="audio"),
                             "f.txt")
    assert (row["stage"], row["task"], row["data"]) == ("deployment", "clustering", "audio")


def test_export_row_of_a_self_contained_problem_points_at_its_own_files():
    row = fileformat.export_row(_problem(source=None, test_node_ids=None), "own1.txt")
    assert (row["repo"], row["ground Truth"], row["test_cases"]) == (
        "", "problems/kornia-rgb-to-gray/solution.py",
        "problems/kornia-rgb-to-gray/test_solution.py")


def test_rendered_csv_reads_back_as_the_same_records():
    rows = [fileformat.export_row(_problem(), "kornia_rgb_to_grayscale1.txt"),
            fileformat.export_row(_problem(entry_point="Net.forward", kind="method",
                                        prompt='Multi-line, "quoted",\nprompt.'),
                               "classes-kornianet1.txt")]
    text = fileformat.render_csv(rows)
    assert text.startswith(",".join(fileformat.CSV_COLUMNS) + "\n")
    assert "\r" not in text
    records, errors = fileformat.parse_csv(text, "dlbench.csv")
    assert errors == []
    assert [r.origin for r in records] == ["kornia_rgb_to_grayscale1.txt",
                                           "classes-kornianet1.txt"]
    keys = {"ground Truth": "ground_truth"}
    for record, row in zip(records, rows, strict=True):
        assert record.fields == {keys.get(k, k): v for k, v in row.items() if k != "filename"}


def test_csv_with_a_byte_order_mark_unknown_columns_and_no_filename():
    text = ("\ufeffrepo,notes,prompt,stage\n"
            "kornia,ignore me,Do it.,Training\n"
            "cleanlab,,Do that.,Inference\n")
    records, errors = fileformat.parse_csv(text, "dl.csv")
    assert errors == []
    assert [(r.origin, r.fields) for r in records] == [
        ("dl.csv:2", {"repo": "kornia", "prompt": "Do it.", "stage": "Training"}),
        ("dl.csv:3", {"repo": "cleanlab", "prompt": "Do that.", "stage": "Inference"})]


def test_bad_csv_rows_are_reported_and_the_rest_is_read():
    text = ('filename,prompt,stage\n'
            'a.txt,Too,many,cells\n'
            ',,\n'
            'b.txt,Second,Training\n')
    records, errors = fileformat.parse_csv(text, "dl.csv")
    assert [r.origin for r in records] == ["b.txt"]
    assert errors == [{"file": "dl.csv:2", "reason": "4 cells but the header has 3"}]


def test_fields_over_the_size_limit_are_reported_by_row():
    # the limit holds per call, whatever the csv module's (process-wide) limit is
    before = csv.field_size_limit()
    text = f"filename,prompt\na.txt,{'x' * 40}\nb.txt,Short\n"
    records, errors = fileformat.parse_csv(text, "dl.csv", field_limit=16)
    assert [r.origin for r in records] == ["b.txt"]
    assert errors == [{"file": "dl.csv:2",
                       "reason": "a field of 40 characters (the limit is 16)"}]
    records, errors = fileformat.parse_csv(f"{'y' * 40},prompt\n", "dl.csv", field_limit=16)
    assert records == [] and errors == [
        {"file": "dl.csv:1", "reason": "a field of 40 characters (the limit is 16)"}]
    records, errors = fileformat.parse_csv(text, "dl.csv", field_limit=40)
    assert [r.origin for r in records] == ["a.txt", "b.txt"] and errors == []
    assert csv.field_size_limit() == before


def test_csv_files_that_cannot_be_read_at_all():
    assert fileformat.parse_csv("", "dl.csv") == (
        [], [{"file": "dl.csv", "reason": "empty CSV file"}])
    assert fileformat.parse_csv("repo,stage\nkornia,Training\n", "dl.csv") == (
        [], [{"file": "dl.csv", "reason": "CSV header has no prompt column; expected repo, "
              "filename, function, class, ground Truth, test_cases, prompt, stage, task, "
              "data"}])


# -- labels ----------------------------------------------------------------------------------


def test_spelling_key_folds_case_punctuation_and_the_word_and():
    assert label_map.spelling_key("Evaluating&Metrics") == "evaluatingmetrics"
    assert label_map.spelling_key("Evaluation and Metrics") == "evaluationmetrics"
    assert label_map.spelling_key("Pre-and-Post Processing") == "prepostprocessing"
    assert label_map.spelling_key("Random Band") == "randomband"


def test_configured_spellings_on_an_unknown_axis_are_ignored():
    table = label_map.spelling_map({"stage": {"Fine-tuning": "training"},
                                  "domain": {"Vision": "image"}, "task": "not a table"})
    assert label_map.map_label("stage", "fine tuning", table) == "training"
    assert "domain" not in table
    assert table["task"] == TABLE["task"]


def test_missing_label_keys_read_as_empty_values():
    labels = label_map.resolve_labels(fileformat.Record("kornia_f1.txt", {"prompt": "x"}), TABLE)
    assert (labels.stage, labels.task, labels.data) == (None, "general", "other")
    assert labels.unknown == [{"axis": "stage", "value": "", "key": "stage"}]
    assert not labels.data_repeats_stage


def test_an_unknown_label_in_a_swapped_class_file_names_the_key_it_was_written_under():
    record = fileformat.Record("classes-kornianet1.txt",
                            {"stage": "Hyperspectral", "task": "Classification",
                             "data": "Training"})
    labels = label_map.resolve_labels(record, TABLE)
    assert labels.swapped
    assert (labels.stage, labels.task, labels.data) == ("training", "classification", None)
    assert labels.unknown == [{"axis": "data", "value": "Hyperspectral", "key": "stage"}]


def test_one_resolved_axis_beats_none_but_not_two():
    # The stage/data scores count resolved axes: the swap needs strictly more in a
    # function file; one resolved axis on each side keeps the plain reading.
    record = fileformat.Record("kornia_f1.txt", {"stage": "Image", "data": "Text"})
    labels = label_map.resolve_labels(record, TABLE)
    assert (labels.stage, labels.data, labels.swapped) == (None, "text", False)
    record = fileformat.Record("kornia_f1.txt", {"stage": "Image", "data": "Training"})
    labels = label_map.resolve_labels(record, TABLE)
    assert (labels.stage, labels.data, labels.swapped) == ("training", "image", True)


# -- ground truth, test cases, repositories --------------------------------------------------


def test_ground_truth_paths_without_anchors_and_with_other_fragments():
    assert fileformat.parse_ground_truth("kornia/color/gray.py") == fileformat.GroundTruth(
        "kornia/color/gray.py")
    assert fileformat.parse_ground_truth("  ") == fileformat.GroundTruth("")
    assert fileformat.parse_ground_truth("/kornia/gray.py#rgb_to_gray") == fileformat.GroundTruth(
        "kornia/gray.py")
    assert fileformat.parse_ground_truth("././kornia/gray.py#a#b").path == "kornia/gray.py"
    assert fileformat.parse_ground_truth("kornia/gray.py#L7 (the function)") == fileformat.GroundTruth(
        "kornia/gray.py", "7")


def test_test_cases_split_on_commas_and_lose_their_quotes():
    value = "'tests/a.py::test_x', \"tests/a.py::test_y\",tests/b.py  tests/a.py::test_x"
    assert fileformat.node_ids(value) == ["tests/a.py::test_x", "tests/a.py::test_y",
                                       "tests/b.py"]
    assert fileformat.node_ids(" , ''") == []


def test_repository_short_names():
    cases = {"https://github.com/pytorch/vision": "vision",
             "https://github.com/PyTorch/Vision.git/": "vision",
             "https://github.com/kornia/kornia/": "kornia",
             "https://github.com/facebookresearch/pytorch3d.git": "pytorch3d",
             "https://gitlab.com/team/tool.git": "tool",
             "https://gitlab.com/team/Tool/": "Tool",
             "tool": "tool"}
    assert {url: fileformat.repo_short_name(url) for url in cases} == cases
