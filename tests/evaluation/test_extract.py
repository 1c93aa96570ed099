"""Code extraction from raw model text, and the code prompt a completion continues."""

from __future__ import annotations

import ast

from curator.evaluation import extract
from curator.evaluation.extract import (
    Block,
    code_prompt,
    completion_code,
    extract_code,
    fenced_blocks,
    signature_problem,
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
    assert fenced_blocks(text) == [Block("python", SOLUTION.strip())]
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


# -- fences as models and markdown tools write them ------------------------------------


def _run(code: str, name: str):
    """Execute extracted code as one module and return the named function."""
    namespace: dict = {}
    exec(compile(code, "<sample>", "exec"), namespace)  # noqa: S102 (the code under test)
    return namespace[name]


def test_language_spellings_of_the_info_string():
    for opening in ("```Python", "```{.python}", "```{python}", "``` py {linenos=true}",
                    "~~~{.python .numberLines}"):
        closing = opening[:3]
        result = extract_code(f"Code:\n{opening}\n{SOLUTION}{closing}\nDone.", "scale")
        assert (result.method, result.code) == (extract.FENCED_ENTRY, SOLUTION), opening


def test_config_and_json_blocks_that_happen_to_parse_are_not_code():
    # `key: value` parses as Python (an annotation) and JSON as a dict display; neither
    # may beat the python block, even a python block that misnames the function.
    code = "def scale_tensor(x, factor):\n    return x * factor\n"
    yaml = "\n".join(f"option_{i}: {i}" for i in range(12))
    json = "{" + ", ".join(f'"key_{i}": {i}' for i in range(12)) + "}"
    text = (f"```python\n{code}```\nConfig:\n```yaml\n{yaml}\n```\n"
            f"Output:\n```json\n{json}\n```\n")
    result = extract_code(text, "scale")
    assert (result.method, result.code) == (extract.FENCED, code)


def test_a_longer_fence_keeps_the_shorter_fences_of_a_docstring_inside():
    code = ('def scale(x, factor):\n    """Multiply.\n\n    ```\n    >>> scale(2, 3)\n    6\n'
            '    ```\n    """\n    return x * factor\n')
    result = extract_code(f"Here:\n````python\n{code}````\n", "scale")
    assert result.code == code
    assert _run(result.code, "scale")(2, 3) == 6


def test_the_longest_defining_block_wins_even_before_a_shorter_one():
    full = ("def scale(x, factor):\n    if factor < 0:\n        raise ValueError(factor)\n"
            "    return x * factor\n")
    short = "def scale(x, factor):\n    return x * factor\n"
    text = f"Full version:\n```python\n{full}```\nWithout the check:\n```python\n{short}```\n"
    assert extract_code(text, "scale").code == full


def test_a_class_entry_point_needs_its_own_class_to_have_the_method():
    other_class = ("class Helper:\n    def forward(self, x):\n        return x\n\n\n"
                   "class Net:\n    def other(self):\n        return 1\n")
    result = extract_code(f"```python\n{other_class}```", "Net.forward")
    assert result.method == extract.FENCED
    top_level = "def forward(self, x):\n    return x\n"
    assert extract_code(f"```python\n{top_level}```", "Net.forward").method == extract.FENCED
    assert extract_code(f"```python\n{top_level}```", "forward").method == extract.FENCED_ENTRY
    # A nested class path is not read as `Outer` with a method named `Inner.run`.
    nested = "class Outer:\n    class Inner:\n        def run(self):\n            return 1\n"
    assert extract_code(f"```python\n{nested}```", "Outer.Inner.run").method == extract.FENCED


def test_async_entry_points_count():
    code = "async def fetch(x):\n    return x\n"
    assert extract_code(f"```python\n{code}```", "fetch").method == extract.FENCED_ENTRY
    method = "class Client:\n    async def fetch(self):\n        return 1\n"
    assert extract_code(f"```python\n{method}```", "Client.fetch").method == extract.FENCED_ENTRY


# -- answers spread over several blocks --------------------------------------------------


def test_a_helper_chain_across_blocks_comes_in_whole_and_in_response_order():
    text = ("Imports and a low-level helper:\n```python\nimport math\n\n\n"
            "def _floor(x):\n    return math.floor(x)\n```\n"
            "A second helper:\n```python\ndef _clip(x):\n    return max(_floor(x), 0)\n```\n"
            "The function:\n```python\ndef scale(x, factor):\n"
            "    return _clip(x) * factor + math.pi * 0\n```\n")
    result = extract_code(text, "scale")
    assert result.code == ("import math\n\ndef _floor(x):\n    return math.floor(x)\n\n"
                           "def _clip(x):\n    return max(_floor(x), 0)\n\n"
                           "def scale(x, factor):\n    return _clip(x) * factor + math.pi * 0\n")
    assert result.merged == 2
    assert _run(result.code, "scale")(3.7, 2) == 6


def test_a_base_class_from_an_earlier_block_comes_before_its_subclass():
    text = ("```python\nclass Base:\n    factor = 2\n```\n"
            "```python\nclass Doubler(Base):\n    def apply(self, x):\n"
            "        return x * self.factor\n```\n"
            "```python\ndef scale(x, factor):\n    return Doubler().apply(x) * factor\n```\n")
    result = extract_code(text, "scale")
    assert result.merged == 2
    assert _run(result.code, "scale")(3, 5) == 30


def test_names_the_chosen_block_binds_itself_are_not_taken_from_usage_blocks():
    code = ("try:\n    import numpy as np\n    import torch\nexcept ImportError:\n"
            "    torch = None\n\nEPS: float = 1e-8\nLOW = HIGH = 0.0\nfor _name in ('a',):\n"
            "    pass\n\n\ndef normalise(x):\n"
            "    return (x - LOW + HIGH) / (np.linalg.norm(x) + EPS) + 0 * len(_name)\n")
    usage = ("from solution import normalise, EPS, LOW, HIGH, torch, _name\n"
             "import numpy as np\n\nprint(normalise(np.ones(3)))\n")
    result = extract_code(f"```python\n{code}```\nUsage:\n```python\n{usage}```\n", "normalise")
    assert (result.code, result.merged) == (code, 0)


def test_an_import_the_chosen_block_has_is_not_repeated_for_a_helper():
    helper = "import torch\n\n\ndef _clip(x):\n    return torch.clamp(x, min=0)\n"
    code = "import torch\n\n\ndef scale(x, factor):\n    return _clip(x) * torch.tensor(factor)\n"
    result = extract_code(f"```python\n{helper}```\n```python\n{code}```\n", "scale")
    assert result.code == "def _clip(x):\n    return torch.clamp(x, min=0)\n\n" + code
    assert result.merged == 1


def test_only_what_is_used_comes_in():
    imports = "import math\nimport os.path\nimport json\n"
    helpers = "def _unused(x):\n    return x\n\n\ndef _half(x):\n    return x / 2\n"
    code = "def scale(path, factor):\n    return _half(len(os.path.basename(path))) * factor\n"
    text = f"```python\n{imports}```\n```python\n{helpers}```\n```python\n{code}```\n"
    result = extract_code(text, "scale")
    assert result.code == ("import os.path\n\ndef _half(x):\n    return x / 2\n\n" + code)
    assert _run(result.code, "scale")("/a/bcd", 3) == 4.5
    # Only imports, from two blocks, joined in order:
    text = ("```python\nimport math\n```\n```python\nimport os\n```\n"
            "```python\ndef scale(p, factor):\n    return math.floor(len(os.sep)) * factor\n```\n")
    result = extract_code(text, "scale")
    assert result.code == ("import math\nimport os\n\ndef scale(p, factor):\n"
                           "    return math.floor(len(os.sep)) * factor\n")
    assert result.merged == 2


def test_a_self_contained_answer_with_a_usage_block_merges_nothing():
    usage = "x = torch.ones(3)\nprint(scale(x, 2))\n"
    result = extract_code(f"```python\n{SOLUTION}```\nUsage:\n```python\n{usage}```\n", "scale")
    assert (result.code, result.merged) == (SOLUTION, 0)


def test_helpers_go_after_the_future_imports_of_the_chosen_block():
    code = ('"""Scaling."""\nfrom __future__ import annotations\n\n\n'
            "def scale(x: float, factor: float) -> float:\n    return _clip(x) * factor\n")
    text = f"```python\ndef _clip(x):\n    return max(x, 0)\n```\n```python\n{code}```\n"
    result = extract_code(text, "scale")
    assert result.code == ('"""Scaling."""\nfrom __future__ import annotations\n\n'
                           "def _clip(x):\n    return max(x, 0)\n\n"
                           "def scale(x: float, factor: float) -> float:\n"
                           "    return _clip(x) * factor\n")
    assert _run(result.code, "scale")(-1.0, 2.0) == 0


# -- reasoning and unfenced code ---------------------------------------------------------


def test_a_longer_draft_in_the_reasoning_does_not_beat_the_answer():
    draft = ("import torch\n\n\ndef scale(x, factor):\n    # first idea, too slow\n"
             "    out = x.clone()\n    for i in range(len(out)):\n        out[i] *= factor\n"
             "    return out\n")
    text = f"<think>\n```python\n{draft}```\nSimpler:</think>\n```python\n{SOLUTION}```\n"
    assert extract_code(text, "scale").code == SOLUTION


def test_code_written_only_inside_the_reasoning_is_still_found():
    text = f"<thinking>\nLet me write it.\n```python\n{SOLUTION}```\n</thinking>\nSee above."
    result = extract_code(text, "scale")
    assert (result.method, result.code) == (extract.FENCED_ENTRY, SOLUTION)


def test_bare_code_after_the_reasoning():
    result = extract_code(f"<think>It multiplies.</think>\n{SOLUTION}", "scale")
    assert (result.method, result.code) == (extract.WHOLE, SOLUTION)


def test_unfenced_code_followed_directly_by_prose():
    text = ("Here is the code:\nimport torch\ndef scale(x, factor):\n    return x * factor\n"
            "It runs in linear time.\nHope this helps!")
    result = extract_code(text, "scale")
    assert result.method == extract.UNFENCED
    assert result.code == "import torch\ndef scale(x, factor):\n    return x * factor\n"
    odd = text.replace("\nHope this helps!", "")
    assert extract_code(odd, "scale").code == result.code


def test_a_bare_constant_is_not_code():
    assert extract_code("42", "scale").method == extract.NONE
    assert extract_code("# nothing to see\n", "scale").method == extract.NONE
    assert extract_code("   \n", "scale").method == extract.NONE


# -- prompts, signatures, completions and solutions --------------------------------------


def test_code_prompt_drops_a_pass_placeholder_and_the_blank_line_before_it():
    prompt = ('```python\ndef scale(x, factor):\n    """Multiply."""\n\n    pass\n```\n')
    assert code_prompt(prompt, "scale") == 'def scale(x, factor):\n    """Multiply."""\n'


def test_code_prompt_adds_each_missing_reference_import_once():
    reference = "import math\nimport torch\nfrom torch import nn\n\n\ndef scale(x, f):\n    pass\n"
    prompt = "```python\nimport torch\n\n\ndef scale(x, f):\n    ...\n```"
    assert code_prompt(prompt, "scale", reference=reference) == (
        "import math\nfrom torch import nn\n\n\nimport torch\n\n\ndef scale(x, f):\n")


def test_code_prompt_picks_the_declaring_block_after_its_imports():
    prompt = ("```python\nimport torch\n\n\ndef scale(x, factor):\n    ...\n```\n"
              "Example:\n```python\ny = scale(torch.ones(2), 3)\n```\n")
    assert code_prompt(prompt, "scale") == "import torch\n\n\ndef scale(x, factor):\n"
    prompt = ("```python\nfrom torch import nn\n\n\nclass Net(nn.Module):\n"
              "    def forward(self, x):\n        ...\n```\n"
              "Example:\n```python\nnet = Net()\n```\n")
    assert code_prompt(prompt, "Net.forward") == ("from torch import nn\n\n\nclass Net(nn.Module):\n"
                                                 "    def forward(self, x):\n")


def test_signature_problem_accepts_headers_without_a_body():
    ok = {
        "scale": ["def scale(x, factor):", "def scale(x, factor): ...",
                  "import torch\n\n\ndef scale(x, factor):\n    # TODO: implement",
                  "async def scale(x, factor):"],
        "Net.forward": ["import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):",
                        "class Net:\n    def forward(self, x):\n        ..."],
    }
    for entry_point, blocks in ok.items():
        for block in blocks:
            prompt = f"Write it.\n```python\n{block}\n```\n"
            assert signature_problem(prompt, entry_point) is None, block


def test_signature_problem_says_what_is_missing():
    assert signature_problem("Write scale(x, factor).", "scale") == (
        "the prompt has no ```python block with the signature of scale")
    broken = "```python\ndef scale(x, factor:\n    ...\n```"
    assert signature_problem(broken, "scale") == (
        "the prompt's python block declaring scale does not parse")
    broken_class = "```python\nclass Net:\n    def forward(self, x:\n```"
    assert signature_problem(broken_class, "Net.forward") == (
        "the prompt's python block declaring Net.forward does not parse")
    other = "```python\ndef shift(x, offset):\n    ...\n```\n```python\ndef forward(x):\n```"
    assert signature_problem(other, "scale") == "no python block of the prompt declares scale"
    assert signature_problem(other, "Net.forward") == (
        "no python block of the prompt declares Net.forward")


def test_a_completion_continues_a_prefix_without_a_final_newline():
    code, method = completion_code("def scale(x, factor):", "    return x * factor\n", "scale")
    assert (code, method) == ("def scale(x, factor):\n    return x * factor\n", "completion")


def test_a_completion_in_markdown_is_extracted():
    code, method = completion_code("def scale(x, factor):\n",
                                   f"Here you go:\n```python\n{SOLUTION}```\n", "scale")
    assert (code, method) == (SOLUTION, "completion-fenced-entry")
    # Markdown that does not define the entry point stays a (failing) continuation.
    code, method = completion_code("def scale(x, factor):\n", "```python\nprint(1)\n```",
                                   "scale")
    assert (code, method) == ("def scale(x, factor):\n```python\nprint(1)\n```", "completion")


def test_solution_rows_with_fences_inside_a_docstring_or_tilde_fences():
    documented = ('def scale(x, factor):\n    """Multiply.\n\n    ```python\n    scale(2, 3)\n'
                  '    ```\n    """\n    return x * factor\n')
    assert solution_code(documented, "scale") == (documented, "solution")
    tilde = f"Solution:\n~~~python\n{SOLUTION}~~~\n"
    assert solution_code(tilde, "scale") == (SOLUTION, "solution-fenced-entry")
    no_code = "Solution:\n```text\nnot written yet\n```\n"
    assert solution_code(no_code, "scale") == (no_code, "solution")
