"""Code extraction from raw model text, and the code prompt a completion continues."""

from __future__ import annotations

import ast

from curator.evaluation import extract
from curator.evaluation.extract import (
    code_prompt,
    completion_code,
    extract_code,
    fenced_blocks,
    solution_code,
)

SOLUTION = """import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    return x * factor
"""


def test_single_fenced_block_with_prose_around():
    text = ("Sure! Here is the implementation you asked for.\n\n```python\n"
            f"{SOLUTION}```\n\nThis multiplies every element by `factor`. Let me know!")
    result = extract_code(text, "scale")
    assert result.method == extract.FENCED_ENTRY
    assert result.code == SOLUTION
    assert "Sure" not in result.code


def test_prefers_the_block_that_defines_the_entry_point_over_a_longer_one():
    usage = "\n".join(f"print({i})" for i in range(30))
    text = (f"```python\n{SOLUTION}```\n\nExample usage:\n\n```python\n{usage}\n```\n")
    result = extract_code(text, "scale")
    assert result.method == extract.FENCED_ENTRY
    assert "def scale" in result.code
    assert "print(" not in result.code


def test_several_defining_blocks_longest_wins():
    short = "def scale(x, factor):\n    return x\n"
    long = ("def _check(factor):\n    if factor < 0:\n        raise ValueError('neg')\n\n\n"
            "def scale(x, factor):\n    _check(factor)\n    return x * factor\n")
    text = f"First try:\n```python\n{short}```\nBetter:\n```python\n{long}```\n"
    result = extract_code(text, "scale")
    assert "_check" in result.code  # helper kept
    assert result.code.count("def scale") == 1


def test_keeps_helpers_classes_and_imports_of_the_chosen_block():
    code = ("import math\nimport torch.nn.functional as F\n\n\nclass _Cfg:\n    eps = 1e-6\n\n\n"
            "def _helper(x):\n    return F.relu(x) + _Cfg.eps\n\n\n"
            "def scale(x, factor):\n    return _helper(x) * math.sqrt(factor)\n")
    result = extract_code(f"```py\n{code}```", "scale")
    assert result.code == code


def test_helpers_and_imports_from_other_blocks_are_brought_in():
    text = ("Imports:\n```python\nimport math\n```\n"
            "A helper:\n```python\ndef _clip(x):\n    return math.floor(x)\n```\n"
            "The function:\n```python\ndef scale(x, factor):\n    return _clip(x) * factor\n```\n"
            "Usage:\n```python\nx = math.pi\nprint(scale(x, 2))\n```\n")
    result = extract_code(text, "scale")
    assert result.method == extract.FENCED_ENTRY
    assert result.merged == 2
    tree = ast.parse(result.code)
    names = [type(n).__name__ for n in tree.body]
    assert names == ["Import", "FunctionDef", "FunctionDef"]
    assert "print(" not in result.code and "x = math.pi" not in result.code
    namespace: dict = {}
    exec(compile(result.code, "<sample>", "exec"), namespace)  # noqa: S102 (runs as one module)
    assert namespace["scale"](3.7, 2) == 6


def test_no_fence_whole_text_parses():
    result = extract_code(SOLUTION, "scale")
    assert result.method == extract.WHOLE
    assert result.code == SOLUTION


def test_no_fence_code_inside_prose():
    text = ("Here is my solution:\n\nimport torch\n\ndef scale(x, factor):\n"
            "    return x * factor\n\nThis is efficient because it is vectorised.")
    result = extract_code(text, "scale")
    assert result.method == extract.UNFENCED
    assert result.code.startswith("import torch")
    assert "vectorised" not in result.code
    assert "def scale" in result.code


def test_no_code_at_all():
    assert extract_code("I cannot help with that.", "scale").method == extract.NONE
    assert extract_code("", "scale").code is None
    assert extract_code(None, "scale").code is None
    assert extract_code("Sure", "scale").code is None  # a bare name parses, but is not code


def test_block_that_does_not_parse_is_skipped_for_one_that_does():
    broken = "def scale(x, factor:\n    return x\n"
    fine = "def other(x):\n    return x\n"
    result = extract_code(f"```python\n{broken}```\n```python\n{fine}```", "scale")
    assert result.method == extract.FENCED
    assert result.code == fine
    assert extract_code(f"```python\n{broken}```", "scale").code is None


def test_non_python_blocks_ignored_and_bare_fences_accepted():
    text = ("```bash\npip install torch\n```\n```json\n{\"a\": 1}\n```\n"
            f"```\n{SOLUTION}```\n")
    result = extract_code(text, "scale")
    assert result.code == SOLUTION


def test_unclosed_fence_runs_to_the_end():
    text = f"Here you go:\n```python\n{SOLUTION}"
    blocks = fenced_blocks(text)
    assert len(blocks) == 1 and not blocks[0].closed
    assert extract_code(text, "scale").code == SOLUTION


def test_tilde_fences_and_indented_fences():
    indented = "\n".join("   " + line if line else "" for line in SOLUTION.splitlines())
    text = f"1. The code:\n   ~~~python\n{indented}\n   ~~~\n"
    assert extract_code(text, "scale").code == SOLUTION


def test_reasoning_sections_are_ignored():
    text = ("<think>Maybe:\n```python\ndef scale(x, factor):\n    return x + factor\n```\n"
            "no, that is wrong.</think>\nFinal answer:\n```python\n" + SOLUTION + "```")
    assert extract_code(text, "scale").code == SOLUTION


def test_class_problem_needs_the_class_with_the_method():
    only_method = "def forward(self, x):\n    return x\n"
    whole = ("import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n"
             "    def __init__(self):\n        super().__init__()\n\n"
             "    def forward(self, x):\n        return x * 2\n")
    text = (f"The method:\n```python\n{only_method}```\nThe whole class:\n```python\n"
            f"{whole}```\n")
    result = extract_code(text, "Net.forward")
    assert result.method == extract.FENCED_ENTRY
    assert result.code == whole
    # A class without the method does not define the entry point.
    no_method = "class Net:\n    def other(self):\n        return 1\n"
    assert extract_code(f"```python\n{no_method}```", "Net.forward").method == extract.FENCED


def test_code_prompt_from_markdown_prompt():
    prompt = ("# Title\n\nDo the thing.\n\n```python\ndef scale(x: torch.Tensor, factor: float)"
              " -> torch.Tensor:\n    \"\"\"Multiply.\"\"\"\n    ...\n```\n\n## Details\n\n"
              "```python\ntop = int(torch.randint(0, 3, (1,)))\n```\n")
    prefix = code_prompt(prompt, "scale", reference=SOLUTION)
    # The block declaring the entry point is used even though it is not the last block,
    # the body placeholder is dropped and the reference's imports are put in front.
    assert prefix == ("import torch\n\n\ndef scale(x: torch.Tensor, factor: float) -> "
                      "torch.Tensor:\n    \"\"\"Multiply.\"\"\"\n")
    code, method = completion_code(prefix, "    return x * factor\n", "scale")
    assert method == "completion"
    namespace: dict = {}
    exec(compile(code, "<completion>", "exec"), namespace)  # noqa: S102
    assert namespace["scale"](3, 2) == 6


def test_code_prompt_inline_ellipsis_and_no_block():
    prompt = "```python\ndef scale(x, factor): ...\n```"
    assert code_prompt(prompt, "scale") == "def scale(x, factor):\n"
    assert code_prompt("No code here.", "scale") == ""


def test_completion_that_repeats_the_signature_is_used_alone():
    prefix = "def scale(x, factor):\n"
    code, method = completion_code(prefix, SOLUTION, "scale")
    assert method == "completion-standalone"
    assert code == SOLUTION


def test_broken_completion_is_kept_as_code_so_it_fails_as_a_syntax_error():
    code, method = completion_code("def scale(x, factor):\n", "return (x\n", "scale")
    assert method == "completion"
    assert code == "def scale(x, factor):\nreturn (x\n"


def test_solution_rows_are_used_as_given_unless_markdown():
    assert solution_code(SOLUTION, "scale") == (SOLUTION, "solution")
    bad = "def scale(x):\n  return (\n"
    assert solution_code(bad, "scale") == (bad, "solution")
    code, method = solution_code(f"Answer:\n```python\n{SOLUTION}```", "scale")
    assert code == SOLUTION and method == "solution-fenced-entry"
