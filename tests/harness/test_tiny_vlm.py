"""The tiny VLM loads like a Hub VLM and behaves the way harness tests rely on: each ``<image>``
becomes a known number of image tokens, the pixels reach the logits, and greedy output repeats."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from PIL import Image
from transformers import AutoModelForImageTextToText, AutoProcessor

from arab_mm_tasks.testing.tiny_model import IMAGE_TOKEN, VLM_IMAGE_TOKENS


@pytest.fixture(scope="module")
def loaded(tiny_vlm_dir: Path) -> tuple:
    """The folder loaded the way harnesses load a VLM (lm-eval hf-multimodal, lighteval --vision-model)."""
    return AutoProcessor.from_pretrained(tiny_vlm_dir), AutoModelForImageTextToText.from_pretrained(tiny_vlm_dir)


def two_images(shade: int = 0) -> list[Image.Image]:
    # different sizes and aspect ratios: the processor must bring both to the tower's input size
    return [Image.new("RGB", (64, 48), (255, shade, 0)), Image.new("RGB", (30, 90), (0, shade, 255))]


def chat_prompt(processor) -> str:
    """A GIMMICK-like user turn as lm-eval and lighteval send it: a content list with image parts."""
    content = [{"type": "image"}, {"type": "image"}, {"type": "text", "text": "Answer with a single word or phrase."}]
    return processor.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True)


def test_each_image_placeholder_expands_to_the_image_tokens(loaded):
    processor, model = loaded
    prompt = chat_prompt(processor)
    assert prompt.count(IMAGE_TOKEN) == 2
    for text in (prompt, f"{IMAGE_TOKEN}{IMAGE_TOKEN}\nAnswer with a single word or phrase."):
        inputs = processor(images=two_images(), text=[text], return_tensors="pt")
        assert (inputs["input_ids"] == model.config.image_token_id).sum().item() == 2 * VLM_IMAGE_TOKENS
        assert inputs["pixel_values"].shape[0] == 2


def test_greedy_generation_is_deterministic_and_new(loaded):
    processor, model = loaded
    inputs = processor(images=two_images(), text=[chat_prompt(processor)], return_tensors="pt")
    prompt_len = inputs["input_ids"].shape[1]
    first, second = (model.generate(**inputs, max_new_tokens=8) for _ in range(2))
    assert torch.equal(first, second)
    new = first[0, prompt_len:]
    assert 0 < len(new) <= 8
    assert processor.decode(new, skip_special_tokens=True).strip()  # untied head: not an echo of the prompt's "\n"
    config = model.generation_config
    assert not config.do_sample
    assert (
        config.eos_token_id
        == processor.tokenizer.eos_token_id
        == processor.tokenizer.convert_tokens_to_ids("<|im_end|>")
    )
    assert config.pad_token_id == processor.tokenizer.pad_token_id


def test_pixels_reach_the_logits(loaded):
    processor, model = loaded
    text = [chat_prompt(processor)]
    with torch.no_grad():
        red, green = (
            model(**processor(images=two_images(shade), text=text, return_tensors="pt")).logits for shade in (0, 255)
        )
    assert not torch.allclose(red, green)
