import pytest
import torch

from solution import paired_random_crop


def _inputs(height=6, width=9):
    grid = torch.arange(height * width).reshape(height, width)
    image = torch.stack([grid.float(), -grid.float()])  # (2, H, W)
    return image, grid.clone()


def test_offsets_follow_the_documented_draws():
    image, mask = _inputs()
    for seed in range(5):
        expected_gen = torch.Generator().manual_seed(seed)
        top = int(torch.randint(0, 6 - 3 + 1, (1,), generator=expected_gen))
        left = int(torch.randint(0, 9 - 4 + 1, (1,), generator=expected_gen))
        img_c, mask_c, offset = paired_random_crop(
            image, mask, (3, 4), torch.Generator().manual_seed(seed)
        )
        assert offset == (top, left)
        assert isinstance(offset[0], int) and isinstance(offset[1], int)
        assert torch.equal(img_c, image[:, top : top + 3, left : left + 4])
        assert torch.equal(mask_c, mask[top : top + 3, left : left + 4])


def test_image_and_mask_aligned_shapes_dtypes():
    image, mask = _inputs()
    img_c, mask_c, _ = paired_random_crop(image, mask, (2, 5), torch.Generator().manual_seed(7))
    assert img_c.shape == (2, 2, 5) and mask_c.shape == (2, 5)
    assert img_c.dtype == torch.float32 and mask_c.dtype == torch.int64
    assert torch.equal(img_c[0].long(), mask_c)


def test_every_offset_reachable_and_global_rng_untouched():
    image, mask = _inputs(4, 4)
    torch.manual_seed(123)
    state = torch.get_rng_state()
    tops, lefts = set(), set()
    for seed in range(200):
        _, _, (top, left) = paired_random_crop(image, mask, (2, 3), torch.Generator().manual_seed(seed))
        tops.add(top)
        lefts.add(left)
    assert tops == {0, 1, 2}
    assert lefts == {0, 1}
    assert torch.equal(torch.get_rng_state(), state)


def test_full_size_crop_consumes_both_draws_and_copies():
    image, mask = _inputs(3, 3)
    gen = torch.Generator().manual_seed(0)
    img_c, mask_c, offset = paired_random_crop(image, mask, (3, 3), gen)
    assert offset == (0, 0)
    assert torch.equal(img_c, image) and torch.equal(mask_c, mask)
    reference = torch.Generator().manual_seed(0)
    torch.randint(0, 1, (1,), generator=reference)
    torch.randint(0, 1, (1,), generator=reference)
    assert torch.equal(gen.get_state(), reference.get_state())
    img_c[0, 0, 0] = 999.0
    mask_c[0, 0] = 999
    assert image[0, 0, 0] == 0.0 and mask[0, 0] == 0


def test_errors():
    image, mask = _inputs(4, 4)
    gen = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError):
        paired_random_crop(image, mask, (5, 2), gen)
    with pytest.raises(ValueError):
        paired_random_crop(image, mask, (0, 2), gen)
    with pytest.raises(ValueError):
        paired_random_crop(image, mask[:3], (2, 2), gen)
    with pytest.raises(ValueError):
        paired_random_crop(image[0], mask, (2, 2), gen)
