"""How test modules are read into references (curator/mining/testfind.py).

Each test parses a small test module written the way DL repositories write them (kornia's
pytest classes and fixtures, unittest classes with setUp, star imports, helpers) and
checks which names each pytest node id is found to use. Only references outside the
standard test and array libraries are compared, so a test states exactly which
repository names a test reaches, and nothing stray besides.
"""

from __future__ import annotations

import textwrap

import pytest

from curator.mining.testfind import find_tests, in_test_folder, is_test_module
from curator.pysource.modules import parse_module

LIBRARIES = ("torch", "pytest", "unittest", "numpy", "functools")


def found(text: str, path: str = "tests/test_ops.py") -> dict[str, set[str]]:
    """node id (without the file) -> the references outside the standard libraries."""
    tests = find_tests(parse_module(path, textwrap.dedent(text)))
    return {t.node_id.removeprefix(path + "::"):
            {r for r in t.refs if r.split(".")[0] not in LIBRARIES} for t in tests}


@pytest.mark.parametrize("path, expected", [
    ("tests/test_blur.py", True),
    ("kornia/filters/blur_test.py", True),
    ("tests/conftest.py", False),
    ("tests/test_data.json", False),
    ("kornia/testing.py", False),
])
def test_test_module_names(path, expected):
    assert is_test_module(path) is expected


@pytest.mark.parametrize("path, expected", [
    ("tests/helpers.py", True),
    ("kornia/test/utils.py", True),
    ("src/kornia/testing/base.py", True),
    ("kornia/contrib/tests_data.py", False),
    ("kornia/filters/blur.py", False),
])
def test_test_folders(path, expected):
    assert in_test_folder(path) is expected


def test_kornia_style_class_with_instances_and_parametrize():
    refs = found("""
        import pytest
        import torch

        from kornia.filters import BoxBlur, box_blur


        class TestBoxBlur(BaseTester):
            @pytest.mark.parametrize("kernel_size", [5, (3, 5)])
            def test_smoke(self, kernel_size, device, dtype):
                data = torch.rand(1, 1, 10, 10, device=device, dtype=dtype)
                bb = BoxBlur(kernel_size, "reflect")
                actual = bb(data)
                assert actual.shape == (1, 1, 10, 10)

            def test_on_device(self, device, dtype):
                bb = BoxBlur(3)
                out = bb.to(device, dtype)(torch.rand(1, 1, 4, 4))
                assert out.shape == (1, 1, 4, 4)

            def test_repr(self):
                assert "3" in BoxBlur(3).extra_repr()

            def test_function(self):
                ones = torch.ones(1, 1, 3, 3)
                self.assert_close(box_blur(ones, 3), ones)
        """)
    blur = "kornia.filters.BoxBlur"
    call = {f"{blur}.__call__", f"{blur}.forward"}
    assert refs == {
        "TestBoxBlur::test_smoke": {blur, *call},
        "TestBoxBlur::test_on_device": {blur, *call, f"{blur}.to"},
        "TestBoxBlur::test_repr": {blur, f"{blur}.extra_repr"},
        "TestBoxBlur::test_function": {"kornia.filters.box_blur"},
    }


def test_which_classes_hold_tests():
    refs = found("""
        import unittest
        from unittest import TestCase

        from absl.testing import parameterized
        from kornia.color import rgb_to_hsv


        class HsvConversions(unittest.TestCase):
            def test_dotted_base(self):
                rgb_to_hsv(1)


        class HsvShapes(TestCase):
            def test_bare_base(self):
                rgb_to_hsv(2)


        class HsvParams(parameterized.TestCase):
            def test_other_library(self):
                rgb_to_hsv(3)


        class HsvHelpers:
            def test_not_collected(self):
                rgb_to_hsv(4)


        def test_module_level():
            rgb_to_hsv(5)


        def check_not_a_test():
            rgb_to_hsv(6)
        """)
    assert sorted(refs) == ["HsvConversions::test_dotted_base", "HsvParams::test_other_library",
                            "HsvShapes::test_bare_base", "test_module_level"]


def test_set_up_class_attributes_and_later_instances():
    refs = found("""
        import unittest

        import torch
        from kornia.filters import GaussianBlur2d


        class TestGaussianBlur(unittest.TestCase):
            @classmethod
            def setUpClass(cls):
                cls.device = "cpu"
                cls.blur = GaussianBlur2d((3, 3), (1.5, 1.5))

            def test_forward(self):
                out = self.blur(torch.rand(1, 1, 5, 5))
                self.assertEqual(out.shape, (1, 1, 5, 5))

            def test_to_device(self):
                op = self.blur.to(self.device)
                self.assertEqual(op(torch.rand(1, 1, 5, 5)).shape, (1, 1, 5, 5))

            def test_kernel(self):
                self.assertEqual(self.blur.kernel_size, (3, 3))
                self.assertIsNotNone(self.blur)
        """)
    blur = "kornia.filters.GaussianBlur2d"
    call = {f"{blur}.__call__", f"{blur}.forward"}
    assert refs == {
        "TestGaussianBlur::test_forward": {blur, *call},
        "TestGaussianBlur::test_to_device": {blur, *call, f"{blur}.to"},
        "TestGaussianBlur::test_kernel": {blur, f"{blur}.kernel_size"},
    }


def test_setup_in_a_base_class_of_the_module_counts_for_the_subclasses():
    refs = found("""
        import unittest

        import torch
        from pytorch3d.renderer import MeshRasterizer, RasterizationSettings


        class RasterizerBase(unittest.TestCase):
            def setUp(self):
                super().setUp()
                torch.manual_seed(1)
                self.raster = MeshRasterizer(raster_settings=RasterizationSettings())
                self.raster_cpu = self.raster.to("cpu")


        class MidLevel(RasterizerBase):
            pass


        class TestMeshRasterizer(MidLevel):
            def test_forward(self):
                fragments = self.raster(torch.zeros(1))
                self.assertIsNotNone(fragments)

            def test_settings(self):
                self.assertEqual(self.raster.raster_settings.blur_radius, 0.0)
        """)
    raster = "pytorch3d.renderer.MeshRasterizer"
    setup = {raster, f"{raster}.to", "pytorch3d.renderer.RasterizationSettings"}
    assert refs["TestMeshRasterizer::test_forward"] == {
        *setup, f"{raster}.__call__", f"{raster}.forward"}
    assert refs["TestMeshRasterizer::test_settings"] == {*setup, f"{raster}.raster_settings"}


def test_the_nearest_class_wins_and_cyclic_bases_end():
    refs = found("""
        import unittest

        from kornia.geometry import transform


        class ResizeMixin:
            def _op(self):
                return transform.resize


        class RescaleMixin:
            def _op(self):
                return transform.rescale


        class TestScaling(ResizeMixin, RescaleMixin, unittest.TestCase):
            def test_op(self):
                self._op()(1)


        class TestLoopA(TestLoopB):  # broken code: a cycle of bases
            def test_a(self):
                transform.pyrdown(1)


        class TestLoopB(TestLoopA):
            def test_b(self):
                transform.pyrup(1)
        """)
    assert refs["TestScaling::test_op"] == {"kornia.geometry.transform.resize"}
    assert refs["TestLoopA::test_a"] == {"kornia.geometry.transform.pyrdown"}
    assert refs["TestLoopA::test_b"] == {"kornia.geometry.transform.pyrup"}
    assert refs["TestLoopB::test_a"] == {"kornia.geometry.transform.pyrdown"}


def test_self_helpers_are_followed_to_the_end():
    refs = found("""
        import torch
        import kornia


        def make_image():
            return kornia.utils.image_to_tensor(torch.zeros(4, 4, 3).numpy())


        class TestRemap:
            def _grid(self, h, w):
                return kornia.utils.create_meshgrid(h, w)

            def _warp_identity(self, image):
                return kornia.geometry.remap(image, *self._grid(4, 4).unbind(-1))

            def _warp_shifted(self, image):
                grid = self._grid(4, 4) + 1
                return kornia.geometry.remap(image, *grid.unbind(-1))

            def test_identity_and_shift(self):
                image = make_image()
                assert self._warp_identity(image).shape == self._warp_shifted(image).shape
        """)
    assert refs["TestRemap::test_identity_and_shift"] == {
        "kornia.utils.image_to_tensor", "kornia.utils.create_meshgrid",
        "kornia.geometry.remap"}


def test_recursive_helpers_and_their_callers():
    refs = found("""
        import torch
        from kornia.geometry.transform import build_pyramid


        def _shapes(x):
            if isinstance(x, (list, tuple)):
                return [_shapes(v) for v in x]
            return tuple(x.shape)


        def test_pyramid_shapes():
            pyramid = build_pyramid(torch.rand(1, 1, 8, 8), 3)
            assert _shapes(pyramid) == [(1, 1, 8, 8), (1, 1, 4, 4), (1, 1, 2, 2)]
        """)
    assert refs == {"test_pyramid_shapes": {"kornia.geometry.transform.build_pyramid"}}


def test_fixtures_reach_the_test_even_when_only_requested():
    refs = found("""
        import numpy as np
        import pytest

        from cleanlab.benchmarking.noise_generation import (
            generate_noise_matrix_from_trace,
            generate_noisy_labels,
        )
        from cleanlab.filter import find_label_issues


        @pytest.fixture
        def noise_matrix():
            return generate_noise_matrix_from_trace(3, 2.0, valid_noise_matrix=True, seed=0)


        @pytest.fixture
        def noisy(noise_matrix):
            return generate_noisy_labels(np.arange(30) % 3, noise_matrix)


        def test_generation_is_seeded(noise_matrix):
            assert True


        def test_find_issues(noisy):
            assert np.any(find_label_issues(noisy, np.full((30, 3), 1 / 3)))
        """)
    matrix = "cleanlab.benchmarking.noise_generation.generate_noise_matrix_from_trace"
    assert refs == {
        "test_generation_is_seeded": {matrix},
        "test_find_issues": {matrix, "cleanlab.filter.find_label_issues",
                             "cleanlab.benchmarking.noise_generation.generate_noisy_labels"},
    }


def test_a_helper_reached_through_an_attribute():
    refs = found("""
        import functools

        from kornia.feature import LoFTR


        @functools.lru_cache(maxsize=None)
        def pretrained():
            return LoFTR(pretrained=None)


        def test_fresh_model():
            model = pretrained.__wrapped__()
            assert model is not pretrained()
        """)
    loftr = "kornia.feature.LoFTR"
    assert refs == {"test_fresh_model": {loftr}}


def test_nested_test_classes_and_modules_built_inside_a_test():
    refs = found("""
        import torch
        from kornia.augmentation import RandomCrop
        from kornia.filters import GaussianBlur2d


        class TestAugmentation:
            class TestRandomCrop:
                def test_smoke(self):
                    RandomCrop((2, 2))(torch.rand(1, 1, 4, 4))


        def test_inside_a_custom_module():
            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.blur = GaussianBlur2d((3, 3), (1.0, 1.0))

                def forward(self, x):
                    return self.blur(x)

            net = Net()
            assert net(torch.rand(1, 1, 5, 5)).shape == (1, 1, 5, 5)
        """)
    crop = "kornia.augmentation.RandomCrop"
    assert refs == {
        "TestAugmentation::TestRandomCrop::test_smoke": {crop, f"{crop}.__call__",
                                                        f"{crop}.forward"},
        "test_inside_a_custom_module": {"kornia.filters.GaussianBlur2d"},
    }


def test_module_level_instances():
    refs = found("""
        import unittest

        import torch
        from kornia.filters import GaussianBlur2d

        BLUR = GaussianBlur2d((3, 3), (1.0, 1.0))
        SIZE = 5


        def test_module_level_operator():
            assert BLUR(torch.rand(1, 1, SIZE, SIZE)).shape[-1] == SIZE


        class TestShared(unittest.TestCase):
            def setUp(self):
                self.blur = BLUR

            def test_shared_operator(self):
                self.assertEqual(self.blur(torch.rand(1, 1, 5, 5)).shape[-1], 5)
        """)
    blur = "kornia.filters.GaussianBlur2d"
    call = {f"{blur}.__call__", f"{blur}.forward"}
    assert refs == {"test_module_level_operator": call, "TestShared::test_shared_operator": call}


def test_imports_inside_a_test_resolve_against_the_test_package():
    refs = found("""
        import torch


        def test_against_reference():
            from kornia.filters import box_blur

            from .reference import naive_box_blur
            x = torch.rand(1, 1, 5, 5)
            torch.testing.assert_close(box_blur(x, 3), naive_box_blur(x, 3))
        """, path="tests/filters/test_blur.py")
    assert refs == {"test_against_reference": {"kornia.filters.box_blur",
                                               "tests.filters.reference.naive_box_blur"}}


def test_star_imports():
    refs = found("""
        import unittest

        import torch
        from kornia.color import *
        from kornia.augmentation import *


        def test_roundtrip():
            from torch.testing import assert_close
            rgb = torch.rand(1, 3, 4, 4)
            assert_close(hsv_to_rgb(rgb_to_hsv(rgb)), rgb, atol=1e-4, rtol=0)


        def test_class_method():
            aug = ColorJitter.from_config({"brightness": 0.1})
            assert aug is not None


        class TestColorJitter(unittest.TestCase):
            def setUp(self):
                self.params = {"brightness": 0.1}
                self.aug = ColorJitter(**self.params)

            def test_params(self):
                params = self.aug.forward_parameters((1, 3, 4, 4))
                self.assertIn("brightness_factor", params)
                self.assertEqual(self.params.get("brightness"), 0.1)
        """)
    jitter = "kornia.color.ColorJitter"  # the first star import is the guess
    assert refs == {
        "test_roundtrip": {"kornia.color.hsv_to_rgb", "kornia.color.rgb_to_hsv",
                           "kornia.augmentation.hsv_to_rgb", "kornia.augmentation.rgb_to_hsv"},
        "test_class_method": {f"{jitter}.from_config"},
        "TestColorJitter::test_params": {"kornia.color.ColorJitter",
                                         "kornia.augmentation.ColorJitter",
                                         f"{jitter}.forward_parameters"},
    }
